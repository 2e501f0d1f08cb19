CREATE TABLE "portal_links" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"intent" text NOT NULL,
	"secret_hash" text NOT NULL,
	"return_url" text,
	"success_url" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "portal_sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"intent" text NOT NULL,
	"secret_hash" text NOT NULL,
	"return_url" text,
	"success_url" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "portal_links" ADD CONSTRAINT "portal_links_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_links" ADD CONSTRAINT "portal_links_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "portal_links_secret_unique" ON "portal_links" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "portal_links_environment_idx" ON "portal_links" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "portal_links_expires_idx" ON "portal_links" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "portal_sessions_environment_idx" ON "portal_sessions" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "portal_sessions_expires_idx" ON "portal_sessions" USING btree ("expires_at");