CREATE TABLE "organization_api_keys" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"obfuscated_value" text NOT NULL,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "it_contacts" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"email" text NOT NULL,
	"invitation_intents" jsonb,
	"invited_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organization_api_keys" ADD CONSTRAINT "organization_api_keys_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_api_keys" ADD CONSTRAINT "organization_api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "it_contacts" ADD CONSTRAINT "it_contacts_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "it_contacts" ADD CONSTRAINT "it_contacts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "organization_api_keys_key_hash_unique" ON "organization_api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "organization_api_keys_organization_idx" ON "organization_api_keys" USING btree ("environment_id","organization_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "it_contacts_organization_email_unique" ON "it_contacts" USING btree ("organization_id","email");--> statement-breakpoint
CREATE UNIQUE INDEX "it_contacts_active_invitation_unique" ON "it_contacts" USING btree ("organization_id") WHERE "it_contacts"."invited_at" is not null;--> statement-breakpoint
CREATE INDEX "it_contacts_organization_idx" ON "it_contacts" USING btree ("environment_id","organization_id","id");