import type { Db } from '@atrium/db';
import { and, eq, type SQL } from 'drizzle-orm';
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
  | 'userApiKeysPerMembership'
  | 'rolesPerOrganization';

/**
 * What a quota counted per parent row counts, given by the store that owns the table: the table,
 * the column naming the parent, and which of its rows count when not all do (`only`).
 */
export interface Counted {
  table: PgTable & { environmentId: AnyPgColumn };
  parent: AnyPgColumn;
  only?: SQL | undefined;
}

/**
 * Refuses a create that would take the parent's rows (an organization's groups, a membership's
 * keys, …) past the quota; each owner store calls it with what it counts (a user's memberships:
 * organization-memberships/store.ts). The caller holds the parent's row lock that serialises them.
 */
export function assertBelowParentQuota(
  tx: Db,
  scope: Scope,
  name: ParentQuota,
  counted: Counted,
  parentId: string,
): Promise<void> {
  const { table, parent, only } = counted;
  const where = and(eq(table.environmentId, scope.env.id), eq(parent, parentId), only);
  return assertBelowQuota(tx, scope.deps, name, table, where);
}
