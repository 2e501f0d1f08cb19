CREATE TABLE "audit_log_actions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"name" text NOT NULL,
	"latest_version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log_events" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"action" text NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"actor" jsonb NOT NULL,
	"targets" jsonb NOT NULL,
	"context" jsonb NOT NULL,
	"metadata" jsonb,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log_schemas" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"action_id" text COLLATE "C" NOT NULL,
	"version" integer NOT NULL,
	"actor" jsonb,
	"targets" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"metadata" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "audit_logs_retention_days" integer DEFAULT 365 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log_actions" ADD CONSTRAINT "audit_log_actions_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_events" ADD CONSTRAINT "audit_log_events_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_schemas" ADD CONSTRAINT "audit_log_schemas_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_schemas" ADD CONSTRAINT "audit_log_schemas_action_id_audit_log_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."audit_log_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_actions_environment_name_unique" ON "audit_log_actions" USING btree ("environment_id","name");--> statement-breakpoint
CREATE INDEX "audit_log_events_organization_idx" ON "audit_log_events" USING btree ("environment_id","organization_id","occurred_at","id");--> statement-breakpoint
CREATE INDEX "audit_log_events_organization_id_idx" ON "audit_log_events" USING btree ("environment_id","organization_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_events_action_idx" ON "audit_log_events" USING btree ("environment_id","action");--> statement-breakpoint
CREATE INDEX "audit_log_events_occurred_at_idx" ON "audit_log_events" USING btree ("occurred_at");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_schemas_action_version_unique" ON "audit_log_schemas" USING btree ("action_id","version");