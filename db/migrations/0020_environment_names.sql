-- Environment names become unique (operators name environments by them). Earlier duplicates keep
-- the oldest (lowest id) under its name; each later one is renamed `<name>-<its id>`, unique because ids are.
UPDATE "environments" AS e SET "name" = e."name" || '-' || e."id", "updated_at" = now()
FROM (SELECT "id", row_number() OVER (PARTITION BY "name" ORDER BY "id") AS n FROM "environments") AS d
WHERE d."id" = e."id" AND d.n > 1;--> statement-breakpoint
CREATE UNIQUE INDEX "environments_name_unique" ON "environments" USING btree ("name");
