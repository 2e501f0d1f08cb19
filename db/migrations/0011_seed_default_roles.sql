-- Every existing environment gets the roles a new one starts with: `member` (the default) and
-- `admin`; every existing membership gets the default role. Role ids are `role_` + a ULID made
-- of the environment's creation time (10 Crockford base32 characters) and, as its random part,
-- a rank (member before admin) and an md5 of the environment id and slug (hex digits are
-- Crockford base32 digits too).
INSERT INTO "roles" ("id", "environment_id", "organization_id", "slug", "name", "description", "resource_type_slug", "is_default", "created_at", "updated_at")
SELECT
  'role_' || (
    SELECT string_agg(
      substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((floor(extract(epoch FROM e.created_at) * 1000)::bigint) >> (5 * (9 - i))) & 31)::int + 1, 1),
      '' ORDER BY i)
    FROM generate_series(0, 9) AS i
  ) || r.rank || upper(substr(md5(e.id || ':' || r.slug), 1, 15)),
  e.id, NULL, r.slug, r.name, NULL, 'organization', r.slug = 'member', e.created_at, e.created_at
FROM "environments" e
CROSS JOIN (VALUES ('member', 'Member', '0'), ('admin', 'Admin', '1')) AS r(slug, name, rank)
WHERE NOT EXISTS (
  SELECT 1 FROM "roles" x WHERE x.environment_id = e.id AND x.organization_id IS NULL AND x.slug = r.slug
);
--> statement-breakpoint
INSERT INTO "organization_membership_roles" ("environment_id", "organization_membership_id", "role_id", "position")
SELECT m.environment_id, m.id, r.id, 0
FROM "organization_memberships" m
JOIN "roles" r ON r.environment_id = m.environment_id AND r.organization_id IS NULL AND r.is_default
WHERE NOT EXISTS (SELECT 1 FROM "organization_membership_roles" x WHERE x.organization_membership_id = m.id);
