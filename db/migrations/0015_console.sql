CREATE TABLE "console_sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"admin_token_id" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "actor" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_admin_token_id_admin_tokens_id_fk" FOREIGN KEY ("admin_token_id") REFERENCES "public"."admin_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "console_sessions_token_hash_unique" ON "console_sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "console_sessions_expires_at_idx" ON "console_sessions" USING btree ("expires_at");