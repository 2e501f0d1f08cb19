CREATE TABLE "audit_log_export_parts" (
	"export_id" text COLLATE "C" NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"attempt" integer NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "audit_log_export_parts_export_id_attempt_seq_pk" PRIMARY KEY("export_id","attempt","seq")
);
--> statement-breakpoint
CREATE TABLE "audit_log_exports" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"range_start" timestamp (3) with time zone NOT NULL,
	"range_end" timestamp (3) with time zone NOT NULL,
	"filters" jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"ready_attempt" integer,
	"row_count" integer,
	"byte_count" integer,
	"part_count" integer,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log_export_parts" ADD CONSTRAINT "audit_log_export_parts_export_id_audit_log_exports_id_fk" FOREIGN KEY ("export_id") REFERENCES "public"."audit_log_exports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_export_parts" ADD CONSTRAINT "audit_log_export_parts_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_exports" ADD CONSTRAINT "audit_log_exports_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log_exports" ADD CONSTRAINT "audit_log_exports_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_exports_environment_idx" ON "audit_log_exports" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_exports_pending_idx" ON "audit_log_exports" USING btree ("lease_until","id") WHERE "audit_log_exports"."state" = 'pending';