CREATE TABLE "admin_tokens" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"live" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "environments" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"client_id" text COLLATE "C" NOT NULL,
	"flags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organization_domains" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"domain" text NOT NULL,
	"state" text NOT NULL,
	"verification_strategy" text DEFAULT 'dns' NOT NULL,
	"verification_prefix" text NOT NULL,
	"verification_token" text NOT NULL,
	"verification_failed_reason" text,
	"verification_started_at" timestamp (3) with time zone,
	"next_check_at" timestamp (3) with time zone,
	"last_checked_at" timestamp (3) with time zone,
	"check_attempts" integer DEFAULT 0 NOT NULL,
	"verification_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"name" text NOT NULL,
	"external_id" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"billing_customer_id" text,
	"allow_profiles_outside_organization" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "admin_tokens_token_hash_unique" ON "admin_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_unique" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_environment_idx" ON "api_keys" USING btree ("environment_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "environments_client_id_unique" ON "environments" USING btree ("client_id");--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_org_domain_unique" ON "organization_domains" USING btree ("organization_id","domain");--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_verified_unique" ON "organization_domains" USING btree ("environment_id","domain") WHERE "organization_domains"."state" = 'verified';--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_token_unique" ON "organization_domains" USING btree ("verification_token");--> statement-breakpoint
CREATE INDEX "organization_domains_environment_domain_idx" ON "organization_domains" USING btree ("environment_id","domain");--> statement-breakpoint
CREATE INDEX "organization_domains_organization_idx" ON "organization_domains" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "organization_domains_due_idx" ON "organization_domains" USING btree ("next_check_at") WHERE "organization_domains"."state" = 'pending' and "organization_domains"."next_check_at" is not null;--> statement-breakpoint
CREATE INDEX "organizations_environment_id_idx" ON "organizations" USING btree ("environment_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "organizations_external_id_unique" ON "organizations" USING btree ("environment_id","external_id");