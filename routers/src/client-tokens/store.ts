import {
  type Db,
  membershipRoles,
  organizationMemberships,
  organizations,
  perHandle,
  permissions,
  renderedOnce,
  rolePermissions,
  sessions,
} from '@atrium/db';
import { and, eq, lt, sql } from 'drizzle-orm';

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
 * (a null slug when its roles grant none). It runs on every use of a widget token
 * (auth/widget-token.ts), so a demotion counts from its commit; its text is rendered once
 * (`renderedOnce`) and sent prepared, without Drizzle's prepared-query wrapper on each use.
 */
const heldWidgetPermissionsRead = renderedOnce(
  ['env', 'org', 'user'] as const,
  (v) => sql`select ${organizationMemberships.id} as membership_id, ${permissions.slug} as slug
    from ${organizationMemberships}
    left join ${membershipRoles} on ${membershipRoles.organizationMembershipId} = ${organizationMemberships.id}
    left join ${rolePermissions} on ${rolePermissions.roleId} = ${membershipRoles.roleId}
    left join ${permissions} on ${permissions.id} = ${rolePermissions.permissionId} and ${permissions.slug} like 'widgets:%'
    where ${organizationMemberships.environmentId} = ${v.env} and ${organizationMemberships.organizationId} = ${v.org}
      and ${organizationMemberships.userId} = ${v.user} and ${organizationMemberships.status} = 'active'`,
);

/** The widget permissions the user's active membership of the organization grants now; undefined without one. */
export async function heldWidgetPermissions(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<Set<string> | undefined> {
  const rows = await heldWidgetPermissionsRead<{ membership_id: string; slug: string | null }>(db, {
    env: environmentId,
    org: organizationId,
    user: userId,
  });
  if (rows.length === 0) return undefined;
  const held = new Set<string>();
  for (const row of rows) if (row.slug !== null) held.add(row.slug);
  return held;
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
