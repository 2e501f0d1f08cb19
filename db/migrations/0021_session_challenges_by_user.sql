-- A widget token is no session (issue #34): its codes and elevated access are held by its user,
-- outside any session. Existing rows take their session's user.
ALTER TABLE "session_challenges" ALTER COLUMN "session_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "session_challenges" ADD COLUMN "user_id" text COLLATE "C";--> statement-breakpoint
UPDATE "session_challenges" AS c SET "user_id" = s."user_id" FROM "sessions" AS s WHERE s."id" = c."session_id";--> statement-breakpoint
DELETE FROM "session_challenges" WHERE "user_id" IS NULL;--> statement-breakpoint
ALTER TABLE "session_challenges" ALTER COLUMN "user_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "session_challenges" ADD CONSTRAINT "session_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "session_challenges_user_idx" ON "session_challenges" USING btree ("user_id","purpose","id");
