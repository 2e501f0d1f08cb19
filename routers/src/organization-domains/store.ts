import {
  builtOnce,
  claimRoundRobin,
  type Db,
  organizationDomains as d,
  environmentsWith,
  equalsLiteral,
  type FairTake,
  interleaveByEnvironment,
  type PageParams,
  paginate,
  rawRows,
} from '@atrium/db';
import { and, asc, eq, inArray, isNotNull, lte, ne, type SQL, sql } from 'drizzle-orm';
import { loadScoped, qualified, type RowLock, scopedId } from '../common/store.ts';
import { writeWithEvent } from '../events/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { assertBelowQuota } from '../quotas.ts';

export type DomainRow = typeof d.$inferSelect;
export type NewDomainRow = typeof d.$inferInsert;
export type DomainChanges = Partial<NewDomainRow>;

/**
 * A domain claim as the stores give it: a row, or one the organization reads decode from
 * `domainTuple` (timestamps then in PostgreSQL's JSON encoding).
 */
export type DomainRecord = Pick<
  DomainRow,
  | 'id'
  | 'organizationId'
  | 'domain'
  | 'state'
  | 'verificationStrategy'
  | 'verificationPrefix'
  | 'verificationToken'
  | 'verificationFailedReason'
> & { createdAt: Date | string; updatedAt: Date | string };

/** `domainTuple` as JSON gives it: positional, in the order `fromDomainTuple` reads. */
export type DomainTuple = [
  id: string,
  organizationId: string,
  domain: string,
  state: DomainRow['state'],
  verificationStrategy: DomainRow['verificationStrategy'],
  verificationPrefix: string,
  verificationToken: string,
  verificationFailedReason: DomainRow['verificationFailedReason'],
  createdAt: string,
  updatedAt: string,
];

/**
 * A domain row as one JSON array, for the organization reads: positional, so PostgreSQL writes
 * no field names per row (bench/README.md, "Issue #20's leftovers").
 */
export const domainTuple = sql`json_build_array(${qualified(d.id)}, ${qualified(d.organizationId)}, ${qualified(d.domain)}, ${qualified(d.state)}, ${qualified(d.verificationStrategy)}, ${qualified(d.verificationPrefix)}, ${qualified(d.verificationToken)}, ${qualified(d.verificationFailedReason)}, ${qualified(d.createdAt)}, ${qualified(d.updatedAt)})`;

/** The record of a `domainTuple`. */
export const fromDomainTuple = (t: DomainTuple): DomainRecord => ({
  id: t[0],
  organizationId: t[1],
  domain: t[2],
  state: t[3],
  verificationStrategy: t[4],
  verificationPrefix: t[5],
  verificationToken: t[6],
  verificationFailedReason: t[7],
  createdAt: t[8],
  updatedAt: t[9],
});

/** Whether an organization of the environment other than `organizationId` holds `domain` verified. */
export async function isVerifiedElsewhere(
  db: Db,
  environmentId: string,
  organizationId: string,
  domain: string,
): Promise<boolean> {
  const [holder] = await db
    .select({ id: d.id })
    .from(d)
    .where(
      and(
        eq(d.environmentId, environmentId),
        eq(d.domain, domain),
        eq(d.state, 'verified'),
        ne(d.organizationId, organizationId),
      ),
    )
    .limit(1);
  return holder !== undefined;
}

/** Which of `domains` an organization of the environment holds verified. */
export async function verifiedAmong(db: Db, environmentId: string, domains: string[]): Promise<Set<string>> {
  if (domains.length === 0) return new Set();
  const rows = await db
    .select({ domain: d.domain })
    .from(d)
    .where(and(eq(d.environmentId, environmentId), inArray(d.domain, domains), eq(d.state, 'verified')));
  return new Set(rows.map((row) => row.domain));
}

/** The pending claims of the environment on any of `domains`, by id. */
export async function pendingClaimsOn(db: Db, environmentId: string, domains: string[]): Promise<DomainRow[]> {
  if (domains.length === 0) return [];
  return db
    .select()
    .from(d)
    .where(and(eq(d.environmentId, environmentId), inArray(d.domain, domains), eq(d.state, 'pending')))
    .orderBy(asc(d.id));
}

/** The organization's claim on `domain`, if it has one. */
export async function findClaim(db: Db, organizationId: string, domain: string): Promise<DomainRow | undefined> {
  const [row] = await db
    .select()
    .from(d)
    .where(and(eq(d.organizationId, organizationId), eq(d.domain, domain)))
    .limit(1);
  return row;
}

export async function insertClaim(db: Db, row: NewDomainRow): Promise<DomainRow | undefined> {
  const [inserted] = await db.insert(d).values(row).returning();
  return inserted;
}

export async function updateClaim(db: Db, id: string, changes: DomainChanges): Promise<DomainRow | undefined> {
  const [updated] = await db.update(d).set(changes).where(eq(d.id, id)).returning();
  return updated;
}

/** Applies `changes` to the environment's pending claims on `domain` other than `exceptId`. */
export async function updatePendingClaims(
  db: Db,
  environmentId: string,
  domain: string,
  exceptId: string,
  changes: DomainChanges,
): Promise<DomainRow[]> {
  return db
    .update(d)
    .set(changes)
    .where(and(eq(d.environmentId, environmentId), eq(d.domain, domain), eq(d.state, 'pending'), ne(d.id, exceptId)))
    .returning();
}

// What other resources read of the domains ------------------------------------------------------

/** The organization's verified domains (upstream's `domains` of a directory's events). */
export function verifiedDomainsOfOrganization(db: Db, organizationId: string) {
  return db
    .select({ id: d.id, domain: d.domain })
    .from(d)
    .where(and(eq(d.organizationId, organizationId), eq(d.state, 'verified')))
    .orderBy(asc(d.id));
}

/** The organization that verified this domain in the environment, if one did. */
export async function organizationOfVerifiedDomain(
  db: Db,
  environmentId: string,
  domain: string,
): Promise<string | undefined> {
  const [row] = await db
    .select({ organizationId: d.organizationId })
    .from(d)
    .where(and(eq(d.environmentId, environmentId), eq(d.domain, domain), eq(d.state, 'verified')))
    .limit(1);
  return row?.organizationId;
}

/** The verified claim of the organization on the domain (the SSO sign-in's check, built once). */
const verifiedDomainOf = builtOnce(['env', 'organization', 'domain'] as const, (db, v) =>
  db
    .select({ id: d.id })
    .from(d)
    .where(
      and(
        eq(d.environmentId, v.env),
        eq(d.organizationId, v.organization),
        eq(d.domain, v.domain),
        eq(d.state, 'verified'),
      ),
    )
    .limit(1),
);

/** Whether the organization verified this domain. */
export async function organizationVerifiedDomain(
  db: Db,
  environmentId: string,
  organizationId: string,
  domain: string,
): Promise<boolean> {
  const [row] = await verifiedDomainOf(db, { env: environmentId, organization: organizationId, domain });
  return row !== undefined;
}

/** The domain with this id in the environment, or the contract's 404. */
export const loadDomain = (db: Db, environmentId: string, id: string, lock?: RowLock) =>
  loadScoped(db, d, 'organization_domain', environmentId, id, lock);

/** One keyset page of an organization's domains (by id; the id is time-ordered). */
export function pageOfOrganizationDomains(db: Db, environmentId: string, organizationId: string, params: PageParams) {
  return paginate(
    params,
    d.id,
    (q) =>
      db
        .select()
        .from(d)
        .where(and(eq(d.environmentId, environmentId), eq(d.organizationId, organizationId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The domain with this id in the environment, locked for update, if it is still there. */
export async function findDomainForUpdate(db: Db, environmentId: string, id: string): Promise<DomainRow | undefined> {
  const [row] = await db
    .select()
    .from(d)
    .where(scopedId(d, environmentId, id))
    .for('update')
    .limit(1);
  return row;
}

export async function deleteDomain(db: Db, environmentId: string, id: string): Promise<DomainRow | undefined> {
  const [deleted] = await db
    .delete(d)
    .where(scopedId(d, environmentId, id))
    .returning();
  return deleted;
}

/**
 * Refuses one more scheduled DNS check in the environment at its pending-verifications quota;
 * the caller holds the environment's lock. The state is a literal: the generic plan then uses
 * organization_domains_due_idx (partial on it).
 */
export async function assertBelowPendingChecks(tx: Db, deps: Deps, environmentId: string): Promise<void> {
  await assertBelowQuota(
    tx,
    deps,
    'pendingVerificationsPerEnvironment',
    d,
    and(eq(d.environmentId, environmentId), equalsLiteral(d.state, 'pending'), isNotNull(d.nextCheckAt)),
  );
}

// The organization's domain count -------------------------------------------------------------
// A column of the organization's row, which organizations/store.ts owns. The organizations
// folder reads and writes its domains through this one, so this folder cannot import it back (no
// folder cycle): the organizations store's counter registers here once, at composition
// (app-router.ts).

/** What the domains' writes need of the organization's row: its domain count. */
export interface DomainCounter {
  /**
   * A statement for a WITH entry: one more domain on the organization `organizationId` of the
   * environment, unless it holds `limit` already or `also(organization)` (a condition on the
   * organization's id column) fails; it returns the row's `id, environment_id`.
   */
  counting(environmentId: unknown, organizationId: unknown, limit: unknown, also: (organization: SQL) => SQL): SQL;
  /** The organization's domain count as a scalar subquery: null when the environment has no such organization. */
  countOf(environmentId: unknown, organizationId: unknown): SQL;
  /** `counting` on its own: false when the organization holds `limit` domains already. */
  count(db: Db, organizationId: string, limit: number): Promise<boolean>;
  uncount(db: Db, organizationId: string): Promise<void>;
}

let registered: DomainCounter | undefined;

/** Registers the counter (organizations/store.ts `domainCounter`); a second registration replaces it. */
export function registerDomainCounter(counter: DomainCounter): void {
  registered = counter;
}

/** The registered counter; none is an error, as a domain written uncounted would break the quota. */
export function domainCounter(): DomainCounter {
  if (!registered) throw new Error('no domain counter is registered (app-router.ts)');
  return registered;
}

/** `claimWithEvent`'s condition on the organization `o`: no other one holds the domain verified, and `o` has no claim on it. */
const unclaimed = (v: Record<'environmentId' | 'domain', unknown>, o: SQL) =>
  sql`not exists (select 1 from ${d} where environment_id = ${v.environmentId} and domain = ${v.domain} and state = 'verified' and organization_id <> ${o})
        and not exists (select 1 from ${d} where organization_id = ${o} and domain = ${v.domain})`;

/**
 * Create domain as one autocommit statement (see `writeWithEvent`): the claim and its event.
 * `counted` bumps the organization's domain count, which also locks the organization's row. It
 * writes nothing when the organization is not there, is at its domain quota, another
 * organization holds the domain verified, or this one has it already (`whyClaimRefused` then
 * says which). The quota condition is re-checked on the newest row after a concurrent create
 * commits; the other checks read the statement's snapshot, and a claim made meanwhile loses at
 * the unique index, mapped to the same 409.
 */
export const claimWithEvent = writeWithEvent(
  ['id', 'environmentId', 'organizationId', 'domain', 'prefix', 'token', 'at', 'limit'],
  (
    v,
  ) => sql`insert into ${d} (id, environment_id, organization_id, domain, state, verification_strategy, verification_prefix, verification_token, verification_started_at, created_at, updated_at)
      select ${v.id}, o.environment_id, o.id, ${v.domain}, 'pending', 'dns', ${v.prefix}, ${v.token}, ${v.at}::timestamptz, ${v.at}::timestamptz, ${v.at}::timestamptz
      from counted as o
      returning id`,
  (v) =>
    sql`counted as (${domainCounter().counting(v.environmentId, v.organizationId, v.limit, (o) => unclaimed(v, o))})`,
);

/** What `claimWithEvent` found in the way, read after it wrote nothing. */
export interface ClaimObstacles {
  organization: boolean;
  verifiedElsewhere: boolean;
  claimed: boolean;
  domainCount: number;
}

export async function whyClaimRefused(
  db: Db,
  environmentId: string,
  organizationId: string,
  domain: string,
): Promise<ClaimObstacles> {
  const [row] = await rawRows<{ domain_count: number | null; verified_elsewhere: boolean; claimed: boolean }>(
    db,
    sql`select ${domainCounter().countOf(environmentId, organizationId)} as domain_count,
      exists (select 1 from ${d} where environment_id = ${environmentId} and domain = ${domain} and state = 'verified' and organization_id <> ${organizationId}) as verified_elsewhere,
      exists (select 1 from ${d} where organization_id = ${organizationId} and domain = ${domain}) as claimed`,
  );
  return {
    organization: row?.domain_count !== null && row?.domain_count !== undefined,
    verifiedElsewhere: row?.verified_elsewhere === true,
    claimed: row?.claimed === true,
    domainCount: Number(row?.domain_count ?? 0),
  };
}

/** The environment a domain belongs to, named by its id alone (the admin surface). */
export async function environmentIdOfDomain(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db.select({ environmentId: d.environmentId }).from(d).where(eq(d.id, id)).limit(1);
  return row?.environmentId;
}

/**
 * Takes and leases up to `limit` due pending domains, round-robin by environment (at most
 * `fair.perEnvironment` of each, after `fair.cursor`), in one short transaction: the rows are
 * locked `FOR UPDATE SKIP LOCKED` and their `next_check_at` moved to `leaseUntil`. Returns the
 * leased rows interleaved by environment, and the cursor for the next round.
 */
export async function leaseDueDomains(
  db: Db,
  now: Date,
  limit: number,
  leaseUntil: Date,
  fair: FairTake,
): Promise<{ rows: DomainRow[]; cursor: string }> {
  // The environments are found by the index's own predicate (a literal, so the generic plan
  // uses organization_domains_due_idx): one probe each, however many checks wait for later.
  const pending = and(
    equalsLiteral(d.state, 'pending'),
    isNotNull(d.nextCheckAt),
    fair.environments ? inArray(d.environmentId, fair.environments) : undefined,
  ) as SQL;
  const due = and(pending, lte(d.nextCheckAt, now)) as SQL;
  return db.transaction(async (tx) => {
    const claim = (after: string, upto: string, n: number) =>
      rawRows<{ id: string; environmentId: string }>(
        tx,
        sql`with recursive ${environmentsWith(d, d.environmentId, pending, after, upto)}
        select taken.id, taken.environment_id as "environmentId" from envs cross join lateral (
          select ${d.id} as id, ${d.environmentId} as environment_id from ${d}
          where ${due} and ${d.environmentId} = envs.environment_id
          order by ${d.nextCheckAt} limit ${fair.perEnvironment}
          for update skip locked
        ) as taken
        limit ${n}`,
      );
    const { rows, cursor } = await claimRoundRobin(fair.cursor ?? '', limit, claim);
    if (rows.length === 0) return { rows: [], cursor };
    const leased = await tx
      .update(d)
      .set({ nextCheckAt: leaseUntil })
      .where(
        inArray(
          d.id,
          rows.map((row) => row.id),
        ),
      )
      .returning();
    const byId = new Map(leased.map((row) => [row.id, row]));
    return { rows: interleaveByEnvironment(rows).flatMap(({ id }) => byId.get(id) ?? []), cursor };
  });
}

// What the organizations' statements read and write of their domains (organizations/store.ts) ----

/**
 * The organization's claims as one JSON array of `domainTuple`s by id, a subquery of an
 * organization read: `organizationId` names the outer row's id.
 */
export const domainsOf = (organizationId: SQL) => sql`(
  select coalesce(json_agg(${domainTuple} order by ${qualified(d.id)}), '[]'::json)
  from ${d} where ${qualified(d.organizationId)} = ${organizationId})`;

/**
 * The ids of the organizations of the environment with a claim (any state) on a domain for which
 * `domainIs(domain)` holds: a subquery (the organizations list's domains filter, the console's search).
 */
export const claimantsOf = (environmentId: unknown, domainIs: (domain: SQL) => SQL) =>
  sql`select ${d.organizationId} from ${d} where ${d.environmentId} = ${environmentId} and ${domainIs(sql`${d.domain}`)}`;

/**
 * The domains' WITH entries of create organization's one statement (organizations/store.ts
 * `createWithEvent`), by the names of the entries they read: `claims` (the new claims: id, domain,
 * state, strategy, prefix, token), `claim_events` (whose `claim` names a pending claim that a
 * verified one fails) and `created` (the organization's id once it is written).
 */
export const newOrganizationClaims = {
  /** A row when the claims are refused: a domain verified in the environment, or a pending claim on a claimed-verified one that `claim_events` does not name. */
  obstacles: (environmentId: unknown) => sql`select 1 from ${d} as d
      where d.environment_id = ${environmentId} and d.domain = any(array(select domain from claims))
        and (d.state = 'verified' or (d.state = 'pending'
          and d.domain = any(array(select domain from claims where state = 'verified'))
          and d.id <> all(array(select claim from claim_events where claim is not null))))
      limit 1`,
  /** The claims, inserted for the `created` organization. */
  inserted: (
    environmentId: unknown,
    at: unknown,
  ) => sql`insert into ${d} (id, environment_id, organization_id, domain, state, verification_strategy, verification_prefix, verification_token, verification_started_at, created_at, updated_at)
      select c.id, ${environmentId}, created.id, c.domain, c.state, c.strategy, c.prefix, c.token, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      from created, claims as c
      returning id`,
  /** The pending claims `claim_events` names, failed once the organization is `created`. */
  failed: (
    at: unknown,
  ) => sql`update ${d} set state = 'failed', verification_failed_reason = 'domain_verified_by_other_organization', next_check_at = null, updated_at = ${at}::timestamptz
      where id = any(array(select claim from claim_events where claim is not null)) and state = 'pending' and exists (select 1 from created)
      returning id`,
};
