CREATE INDEX "audit_log_exports_finished_idx" ON "audit_log_exports" USING btree ("updated_at") WHERE "audit_log_exports"."state" <> 'pending';--> statement-breakpoint
-- Every existing environment gets the ApiKeys and UserApiKeys widgets' permissions (issue #38), as a new one
-- does (routers/src/roles/service.ts SYSTEM_PERMISSIONS), granted to its `admin` role, as 0031 does. Ids as in
-- 0016 (`perm_` + a ULID of the environment's creation time, ranks 5 to 7, md5 of environment and slug).
-- A slug the environment already holds (an app made it by hand, as it had to) is kept as it is and granted.
INSERT INTO "permissions" ("id", "environment_id", "slug", "name", "description", "resource_type_slug", "system", "created_at", "updated_at")
SELECT
  'perm_' || (
    SELECT string_agg(
      substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((floor(extract(epoch FROM e.created_at) * 1000)::bigint) >> (5 * (9 - i))) & 31)::int + 1, 1),
      '' ORDER BY i)
    FROM generate_series(0, 9) AS i
  ) || p.rank || upper(substr(md5(e.id || ':' || p.slug), 1, 15)),
  e.id, p.slug, p.name, NULL, 'organization', true, e.created_at, e.created_at
FROM "environments" e
CROSS JOIN (VALUES
  ('widgets:api-keys:manage', 'Manage API keys (widgets)', '5'),
  ('widgets:user-api-keys:manage-self', 'Manage own API keys (widgets)', '6'),
  ('widgets:user-api-keys:manage-all', 'Manage all members'' API keys (widgets)', '7')
) AS p(slug, name, rank)
WHERE NOT EXISTS (SELECT 1 FROM "permissions" x WHERE x.environment_id = e.id AND x.slug = p.slug);
--> statement-breakpoint
INSERT INTO "role_permissions" ("environment_id", "role_id", "permission_id")
SELECT r.environment_id, r.id, p.id
FROM "roles" r
JOIN "permissions" p ON p.environment_id = r.environment_id
  AND p.slug IN ('widgets:api-keys:manage', 'widgets:user-api-keys:manage-self', 'widgets:user-api-keys:manage-all')
WHERE r.organization_id IS NULL AND r.slug = 'admin'
ON CONFLICT DO NOTHING;
