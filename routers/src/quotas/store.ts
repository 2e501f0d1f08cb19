import {
  agentRegistrations,
  connections,
  type Db,
  directories,
  groups,
  invitations,
  itContacts,
  organizationApiKeys,
} from '@atrium/db';
import { and, eq, gt, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowQuota } from '../quotas.ts';

export type ParentQuota =
  | 'groupsPerOrganization'
  | 'connectionsPerOrganization'
  | 'agentRegistrationsPerOrganization'
  | 'directoriesPerOrganization'
  | 'pendingInvitationsPerOrganization'
  | 'itContactsPerOrganization'
  | 'organizationApiKeysPerOrganization'
  | 'userApiKeysPerMembership';

interface Counted {
  table: PgTable & { environmentId: AnyPgColumn };
  parent: AnyPgColumn;
  only?: (scope: Scope) => SQL;
}

/**
 * The quotas counted per parent row: the table each counts, the column naming the parent, and
 * which of its rows count when not all do (`only`).
 */
const COUNTED: Record<ParentQuota, Counted> = {
  groupsPerOrganization: { table: groups, parent: groups.organizationId },
  connectionsPerOrganization: { table: connections, parent: connections.organizationId },
  agentRegistrationsPerOrganization: { table: agentRegistrations, parent: agentRegistrations.organizationId },
  directoriesPerOrganization: { table: directories, parent: directories.organizationId },
  // An expired invitation is answered `expired` though stored `pending`: it no longer counts.
  pendingInvitationsPerOrganization: {
    table: invitations,
    parent: invitations.organizationId,
    only: (scope) => and(eq(invitations.state, 'pending'), gt(invitations.expiresAt, scope.now())) as SQL,
  },
  itContactsPerOrganization: { table: itContacts, parent: itContacts.organizationId },
  // The organization's own keys; its members' keys count per membership.
  organizationApiKeysPerOrganization: {
    table: organizationApiKeys,
    parent: organizationApiKeys.organizationId,
    only: () => eq(organizationApiKeys.ownerType, 'organization'),
  },
  userApiKeysPerMembership: { table: organizationApiKeys, parent: organizationApiKeys.organizationMembershipId },
};

/**
 * Refuses a create that would take the parent's rows (an organization's groups, a membership's
 * keys, …) past the quota (a user's memberships: organization-memberships/store.ts). The caller holds the parent's row lock that serialises them.
 */
export function assertBelowParentQuota(tx: Db, scope: Scope, name: ParentQuota, parentId: string): Promise<void> {
  const { table, parent, only } = COUNTED[name];
  const where = and(eq(table.environmentId, scope.env.id), eq(parent, parentId), only?.(scope));
  return assertBelowQuota(tx, scope.deps, name, table, where);
}
