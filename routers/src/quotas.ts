import { type Db, environments, rawRows } from '@atrium/db';
import { eq, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { DEFAULT_QUOTAS, type Deps, type Quotas } from './context.ts';
import { quotaExceeded } from './errors.ts';

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
  membershipsPerUser: 'a user may have organization memberships',
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
 * Refuses a create that would take the rows matching `where` in `table` past the quota. The
 * caller holds the lock that serialises these creates (the parent row), so the count, a new
 * statement in READ COMMITTED, sees every create committed before it. Counts at most limit rows.
 */
export async function assertBelowQuota(
  tx: Db,
  deps: Deps,
  name: QuotaName,
  table: PgTable,
  where: SQL | undefined,
  adding = 1,
): Promise<void> {
  const limit = quotaLimit(deps, name);
  const [row] = await rawRows<{ n: number }>(
    tx,
    sql`select count(*)::int as n from (select 1 from ${table} where ${where} limit ${limit}) as counted`,
  );
  if ((row?.n ?? 0) + adding > limit) throw quotaError(deps, name);
}

/**
 * Locks the environment's row until the transaction ends, serialising creates counted against
 * an environment quota. NO KEY UPDATE: inserts elsewhere (their foreign keys take KEY SHARE on
 * this row) are not blocked.
 */
export async function lockEnvironment(tx: Db, environmentId: string): Promise<void> {
  await tx
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.id, environmentId))
    .for('no key update');
}
