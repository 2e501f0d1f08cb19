CREATE TABLE "audit_log_streams" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"config" jsonb NOT NULL,
	"credentials" text,
	"delivered_through" text COLLATE "C",
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log_streams" ADD CONSTRAINT "audit_log_streams_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_streams" ADD CONSTRAINT "audit_log_streams_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_streams_organization_unique" ON "audit_log_streams" USING btree ("environment_id","organization_id");--> statement-breakpoint
CREATE INDEX "audit_log_streams_due_idx" ON "audit_log_streams" USING btree ("environment_id","next_attempt_at","id") WHERE "audit_log_streams"."state" = 'active';