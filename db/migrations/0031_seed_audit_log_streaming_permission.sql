-- Every existing environment gets the AdminPortalAuditLogStreaming widget's permission (issue #38), as a new one
-- does (routers/src/roles/service.ts SYSTEM_PERMISSIONS), granted to its `admin` role. Ids as in
-- 0016 (`perm_` + a ULID of the environment's creation time, rank 4, md5 of environment and slug).
-- A slug the environment already holds (a test or an app made it) is kept as it is and granted.
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
CROSS JOIN (VALUES ('widgets:audit-log-streaming:manage', 'Manage the audit log stream (widgets)', '4')) AS p(slug, name, rank)
WHERE NOT EXISTS (SELECT 1 FROM "permissions" x WHERE x.environment_id = e.id AND x.slug = p.slug);
--> statement-breakpoint
INSERT INTO "role_permissions" ("environment_id", "role_id", "permission_id")
SELECT r.environment_id, r.id, p.id
FROM "roles" r
JOIN "permissions" p ON p.environment_id = r.environment_id AND p.slug = 'widgets:audit-log-streaming:manage'
WHERE r.organization_id IS NULL AND r.slug = 'admin'
ON CONFLICT DO NOTHING;
