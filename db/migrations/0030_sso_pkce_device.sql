ALTER TABLE "sso_authorizations" ADD COLUMN "code_challenge" text;--> statement-breakpoint
ALTER TABLE "sso_authorizations" ADD COLUMN "ip_address" text;--> statement-breakpoint
ALTER TABLE "sso_authorizations" ADD COLUMN "user_agent" text;--> statement-breakpoint
ALTER TABLE "sso_codes" ADD COLUMN "code_challenge" text;