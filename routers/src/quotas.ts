import { countUpTo, type Db } from '@atrium/db';
import { DEFAULT_QUOTAS, type Quotas } from './kernel/config.ts';
import type { Deps } from './kernel/deps.ts';
import { quotaExceeded } from './kernel/errors.ts';

export { lockEnvironment } from '@atrium/db';

export type QuotaName = keyof Quotas;

/** What each quota limits, as its error message says it ("<what> at most <limit>"). */
const WHAT: Record<QuotaName, string> = {
  domainsPerOrganization: 'an organization may hold domains',
  webhookEndpointsPerEnvironment: 'an environment may have webhook endpoints',
  pendingVerificationsPerEnvironment: 'an environment may have domains pending verification',
  apiKeysPerEnvironment: 'an environment may have API keys',
  groupsPerOrganization: 'an organization may have groups',
  connectionsPerOrganization: 'an organization may have connections',
  agentRegistrationsPerOrganization: 'an organization may have agent registrations',
  directoriesPerOrganization: 'an organization may have directories',
  directoryUsersPerDirectory: 'a directory may hold users',
  directoryGroupsPerDirectory: 'a directory may hold groups',
  membershipsPerUser: 'a user may have organization memberships',
  pendingInvitationsPerOrganization: 'an organization may have pending invitations',
  itContactsPerOrganization: 'an organization may have IT contacts',
  organizationApiKeysPerOrganization: 'an organization may have API keys',
  userApiKeysPerMembership: 'a user may have API keys in one organization',
  rolesPerEnvironment: 'an environment may have environment roles',
  rolesPerOrganization: 'an organization may have custom roles',
  permissionsPerEnvironment: 'an environment may have permissions',
  auditLogActionsPerEnvironment: 'an environment may have audit log actions',
  auditLogSchemaVersionsPerAction: 'an audit log action may have schema versions',
  invitationResendsPerDay: 'an invitation may be resent per day',
  invitationMailsPerOrganizationPerDay: 'an organization may send invitation e-mails per day',
};

/** `domainsPerOrganization` → `domains_per_organization` (its setting is ATRIUM_QUOTA_ + upper case). */
export const quotaKey = (name: QuotaName) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function quotaLimit(deps: Deps, name: QuotaName): number {
  return deps.config.quotas?.[name] ?? DEFAULT_QUOTAS[name];
}

/** The 422 `quota_exceeded` of the quota, with its configured limit. */
export function quotaError(deps: Deps, name: QuotaName) {
  return quotaExceeded(quotaKey(name), quotaLimit(deps, name), WHAT[name]);
}

/**
 * Refuses a create that would take the rows matching `where` in `table` past the quota. Called
 * by stores, under the lock that serialises these creates (the parent row): the count, a new
 * statement in READ COMMITTED, then sees every create committed before it.
 */
export async function assertBelowQuota(
  tx: Db,
  deps: Deps,
  name: QuotaName,
  table: Parameters<typeof countUpTo>[1],
  where: Parameters<typeof countUpTo>[2],
  adding = 1,
): Promise<void> {
  const limit = quotaLimit(deps, name);
  if ((await countUpTo(tx, table, where, limit)) + adding > limit) throw quotaError(deps, name);
}
