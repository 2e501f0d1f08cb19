CREATE TABLE "redirect_uris" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"uri" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saml_assertion_ids" (
	"environment_id" text COLLATE "C" NOT NULL,
	"connection_id" text COLLATE "C" NOT NULL,
	"assertion_id" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "saml_assertion_ids_connection_id_assertion_id_pk" PRIMARY KEY("connection_id","assertion_id")
);
--> statement-breakpoint
CREATE TABLE "sso_access_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"profile_id" text COLLATE "C" NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sso_authorizations" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"connection_id" text COLLATE "C" NOT NULL,
	"redirect_uri" text NOT NULL,
	"app_state" text,
	"login_hint" text,
	"saml_request_id" text,
	"oidc_nonce" text,
	"oidc_code_verifier_sealed" text,
	"state" text DEFAULT 'started' NOT NULL,
	"failure_reason" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"consumed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sso_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"profile_id" text COLLATE "C" NOT NULL,
	"redirect_uri" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sso_profiles" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"connection_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C",
	"user_id" text COLLATE "C",
	"idp_id" text NOT NULL,
	"email" text NOT NULL,
	"first_name" text,
	"last_name" text,
	"name" text,
	"groups" jsonb,
	"custom_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"raw_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "domains" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "attribute_mapping" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_idp_entity_id" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_idp_sso_url" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_idp_metadata_url" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_idp_certificates" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_sign_requests" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_sp_private_key_sealed" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_sp_certificate" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "saml_idp_initiated_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_issuer" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_discovery_endpoint" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_metadata" jsonb;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_client_id" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_client_secret_sealed" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "oidc_scopes" jsonb DEFAULT '["openid","profile","email"]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "last_sign_in_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "redirect_uris" ADD CONSTRAINT "redirect_uris_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_assertion_ids" ADD CONSTRAINT "saml_assertion_ids_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_assertion_ids" ADD CONSTRAINT "saml_assertion_ids_connection_id_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_access_tokens" ADD CONSTRAINT "sso_access_tokens_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_access_tokens" ADD CONSTRAINT "sso_access_tokens_profile_id_sso_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."sso_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_authorizations" ADD CONSTRAINT "sso_authorizations_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_authorizations" ADD CONSTRAINT "sso_authorizations_connection_id_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_codes" ADD CONSTRAINT "sso_codes_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_codes" ADD CONSTRAINT "sso_codes_profile_id_sso_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."sso_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_profiles" ADD CONSTRAINT "sso_profiles_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_profiles" ADD CONSTRAINT "sso_profiles_connection_id_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_profiles" ADD CONSTRAINT "sso_profiles_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_profiles" ADD CONSTRAINT "sso_profiles_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "redirect_uris_environment_uri_idx" ON "redirect_uris" USING btree ("environment_id","uri");--> statement-breakpoint
CREATE INDEX "saml_assertion_ids_expires_idx" ON "saml_assertion_ids" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_access_tokens_expires_idx" ON "sso_access_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_authorizations_environment_idx" ON "sso_authorizations" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "sso_authorizations_connection_idx" ON "sso_authorizations" USING btree ("connection_id","id");--> statement-breakpoint
CREATE INDEX "sso_authorizations_expires_idx" ON "sso_authorizations" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_codes_expires_idx" ON "sso_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sso_profiles_connection_idp_id_idx" ON "sso_profiles" USING btree ("connection_id","idp_id");--> statement-breakpoint
CREATE INDEX "sso_profiles_environment_idx" ON "sso_profiles" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "sso_profiles_user_idx" ON "sso_profiles" USING btree ("environment_id","user_id");