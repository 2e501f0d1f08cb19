DROP INDEX "organization_domains_due_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_due_idx";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "fanout_pending" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "domain_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "events_fanout_pending_idx" ON "events" USING btree ("environment_id","id") WHERE "events"."fanout_pending";--> statement-breakpoint
CREATE INDEX "sessions_expires_idx" ON "sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "organization_domains_due_idx" ON "organization_domains" USING btree ("environment_id","next_check_at") WHERE "organization_domains"."state" = 'pending' and "organization_domains"."next_check_at" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("environment_id","next_attempt_at","id") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
-- Existing organizations start with the number of domains they hold (the domain quota counts on it).
UPDATE "organizations" SET "domain_count" = (SELECT count(*) FROM "organization_domains" WHERE "organization_domains"."organization_id" = "organizations"."id");
