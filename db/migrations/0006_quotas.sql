ALTER TABLE "organizations" ADD COLUMN "domain_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "organization_domains_scheduled_idx" ON "organization_domains" USING btree ("environment_id","next_check_at") WHERE "organization_domains"."state" = 'pending' and "organization_domains"."next_check_at" is not null;--> statement-breakpoint
UPDATE "organizations" SET "domain_count" = (SELECT count(*) FROM "organization_domains" WHERE "organization_domains"."organization_id" = "organizations"."id");
