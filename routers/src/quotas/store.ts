import { agentRegistrations, connections, type Db, groups, organizationMemberships, roles } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { assertBelowQuota } from '../quotas.ts';

/** The quotas counted per parent row: the table each counts, and the column naming the parent. */
const COUNTED = {
  groupsPerOrganization: { table: groups, parent: groups.organizationId },
  connectionsPerOrganization: { table: connections, parent: connections.organizationId },
  agentRegistrationsPerOrganization: { table: agentRegistrations, parent: agentRegistrations.organizationId },
  membershipsPerUser: { table: organizationMemberships, parent: organizationMemberships.userId },
  rolesPerOrganization: { table: roles, parent: roles.organizationId },
};

export type ParentQuota = keyof typeof COUNTED;

/**
 * Refuses a create that would take the parent's rows (an organization's groups, a user's
 * memberships, …) past the quota. The caller holds the parent's row lock that serialises them.
 */
export function assertBelowParentQuota(tx: Db, scope: Scope, name: ParentQuota, parentId: string): Promise<void> {
  const { table, parent } = COUNTED[name];
  const where = and(eq(table.environmentId, scope.env.id), eq(parent, parentId));
  return assertBelowQuota(tx, scope.deps, name, table, where);
}
