CREATE TABLE "directory_quota_shards" (
	"environment_id" text COLLATE "C" NOT NULL,
	"directory_id" text COLLATE "C" NOT NULL,
	"kind" text NOT NULL,
	"shard" smallint NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "directory_quota_shards_pkey" PRIMARY KEY("directory_id","kind","shard")
);
--> statement-breakpoint
ALTER TABLE "directory_quota_shards" ADD CONSTRAINT "directory_quota_shards_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_quota_shards" ADD CONSTRAINT "directory_quota_shards_directory_id_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- The users and groups directories hold already, spread over the 16 shards as creates would spread them.
INSERT INTO "directory_quota_shards" ("environment_id", "directory_id", "kind", "shard", "count")
SELECT d."environment_id", d."id", c."kind", s.shard, (c.n / 16) + (CASE WHEN s.shard < c.n % 16 THEN 1 ELSE 0 END)
FROM (
  SELECT "directory_id", 'users' AS "kind", count(*)::int AS n FROM "directory_users" GROUP BY "directory_id"
  UNION ALL
  SELECT "directory_id", 'groups' AS "kind", count(*)::int AS n FROM "directory_groups" GROUP BY "directory_id"
) AS c
JOIN "directories" AS d ON d."id" = c."directory_id"
CROSS JOIN generate_series(0, 15) AS s(shard)
WHERE (c.n / 16) + (CASE WHEN s.shard < c.n % 16 THEN 1 ELSE 0 END) > 0;
