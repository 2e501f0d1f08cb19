import {
  type Db,
  membershipRoles,
  organizationMemberships,
  organizations,
  perHandle,
  permissions,
  rolePermissions,
  sessions,
} from '@atrium/db';
import { and, eq, like, lt, sql } from 'drizzle-orm';

/**
 * Deletes up to `batchSize` sessions expired before `cutoff`, revoked ones included (a revoked
 * session keeps its `expires_at`, so it goes 7 days after it would have expired); how many went. As the events purge:
 * ids as an array (primary-key lookups under a generic plan), in a transaction (its own connection).
 */
export async function purgeSessionsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const expired = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(lt(sessions.expiresAt, cutoff))
    .orderBy(sessions.expiresAt)
    .limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx.delete(sessions).where(sql`${sessions.id} = any(array(${expired}))`).returning({ id: sessions.id }),
  );
  return deleted.length;
}

/**
 * The widget permissions (`widgets:*` slugs) the roles of the user's **active** membership of the
 * organization grant now: no rows when there is no active membership, else one row per slug
 * (a null slug when its roles grant none). Prepared once per handle (`perHandle`): it runs on
 * every use of a widget token (auth/widget-token.ts), so a demotion counts from its commit.
 */
const heldWidgetPermissionsRead = perHandle((db: Db) =>
  db
    .select({ membershipId: organizationMemberships.id, slug: permissions.slug })
    .from(organizationMemberships)
    .leftJoin(membershipRoles, eq(membershipRoles.organizationMembershipId, organizationMemberships.id))
    .leftJoin(rolePermissions, eq(rolePermissions.roleId, membershipRoles.roleId))
    .leftJoin(permissions, and(eq(permissions.id, rolePermissions.permissionId), like(permissions.slug, 'widgets:%')))
    .where(
      and(
        eq(organizationMemberships.environmentId, sql.placeholder('env')),
        eq(organizationMemberships.organizationId, sql.placeholder('org')),
        eq(organizationMemberships.userId, sql.placeholder('user')),
        eq(organizationMemberships.status, 'active'),
      ),
    )
    .prepare('widget_permissions_held'),
);

/** The widget permissions the user's active membership of the organization grants now; undefined without one. */
export async function heldWidgetPermissions(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<Set<string> | undefined> {
  const rows = await heldWidgetPermissionsRead(db).execute({ env: environmentId, org: organizationId, user: userId });
  if (rows.length === 0) return undefined;
  return new Set(rows.flatMap((row) => (row.slug === null ? [] : [row.slug])));
}

/** Whether the organization is still in the environment (a user-less widget token's check on every use). */
const organizationExistsRead = perHandle((db: Db) =>
  db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, sql.placeholder('org')), eq(organizations.environmentId, sql.placeholder('env'))))
    .limit(1)
    .prepare('widget_organization_exists'),
);

export async function organizationExists(db: Db, environmentId: string, organizationId: string): Promise<boolean> {
  const rows = await organizationExistsRead(db).execute({ env: environmentId, org: organizationId });
  return rows.length > 0;
}
