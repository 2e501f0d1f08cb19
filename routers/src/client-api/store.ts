import {
  type Db,
  environments,
  membershipRoles,
  organizationMemberships,
  permissions,
  rolePermissions,
} from '@atrium/db';
import { and, eq, inArray } from 'drizzle-orm';
import type { EnvironmentInfo } from '../kernel/scope.ts';

/** The environments these client ids belong to (a client token's audience names one). */
export function environmentsOfClientIds(db: Db, clientIds: string[]): Promise<EnvironmentInfo[]> {
  return db
    .select({
      id: environments.id,
      name: environments.name,
      clientId: environments.clientId,
      flags: environments.flags,
    })
    .from(environments)
    .where(inArray(environments.clientId, clientIds));
}

/** The permission slugs the roles of the user's membership of the organization grant (distinct). */
export async function membershipPermissionSlugs(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<string[]> {
  const rows = await db
    .selectDistinct({ slug: permissions.slug })
    .from(organizationMemberships)
    .innerJoin(membershipRoles, eq(membershipRoles.organizationMembershipId, organizationMemberships.id))
    .innerJoin(rolePermissions, eq(rolePermissions.roleId, membershipRoles.roleId))
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(
      and(
        eq(organizationMemberships.environmentId, environmentId),
        eq(organizationMemberships.organizationId, organizationId),
        eq(organizationMemberships.userId, userId),
      ),
    );
  return rows.map((row) => row.slug);
}
