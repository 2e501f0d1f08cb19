import { randomBytes } from 'node:crypto';
import {
  claimRoundRobin,
  type Db,
  environmentsWith,
  equalsLiteral,
  type FairTake,
  interleaveByEnvironment,
  newId,
  organizationDomains,
  organizations,
  rawRows,
} from '@atrium/db';
import { and, eq, inArray, isNotNull, lte, ne, type SQL, sql } from 'drizzle-orm';
import { iso } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { ApiError, badRequest, conflict, type FieldError, fromDatabaseError, invalid, notFound } from '../errors.ts';
import { recordEvent, writeWithEvent } from '../events/record.ts';
import { randomBase62 } from '../lib/random.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowQuota, lockEnvironment, quotaError, quotaLimit } from '../quotas.ts';
import { checkDomain } from './domain-rules.ts';
import type { DomainDataEntry, OrganizationDomain } from './schemas.ts';

type DomainRow = typeof organizationDomains.$inferSelect;

/** The single place that turns a domain row into its wire shape. */
export function toOrganizationDomain(row: DomainRow): OrganizationDomain {
  return {
    object: 'organization_domain',
    id: row.id,
    organization_id: row.organizationId,
    domain: row.domain,
    state: row.state,
    verification_strategy: row.verificationStrategy,
    verification_prefix: row.verificationPrefix,
    verification_token: row.verificationToken,
    verification_failed_reason: row.verificationFailedReason ?? null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Validates a domain name by the contract's rules or throws the matching 422. */
export function requireValidDomain(raw: string, field: string): string {
  const check = checkDomain(raw);
  if (check.ok) return check.domain;
  throw invalid([{ field, code: check.code, message: check.message }], check.code, check.message);
}

/** Validates every `domain_data` entry, reporting all bad entries at once; merges repeats. */
export function normalizeDomainData(entries: DomainDataEntry[]): DomainDataEntry[] {
  const errors: FieldError[] = [];
  const merged = new Map<string, DomainDataEntry>();
  entries.forEach((entry, index) => {
    const check = checkDomain(entry.domain);
    if (!check.ok) {
      errors.push({ field: `domain_data.${index}.domain`, code: check.code, message: check.message });
      return;
    }
    const previous = merged.get(check.domain);
    const state = previous?.state === 'verified' ? 'verified' : entry.state;
    merged.set(check.domain, { domain: check.domain, state });
  });
  if (errors.length > 0) {
    const code = errors.every((e) => e.code === 'consumer_domain') ? 'consumer_domain' : 'invalid_request_parameters';
    throw invalid(errors, code, errors.length === 1 ? (errors[0] as FieldError).message : 'Validation failed.');
  }
  return [...merged.values()];
}

function newVerificationPrefix(): string {
  return `atrium-domain-verification-${randomBytes(3).toString('hex')}`;
}

/** Refuses a claim on a domain that another organization of the environment holds verified. */
async function assertNotVerifiedElsewhere(tx: Db, scope: Scope, organizationId: string, domain: string) {
  const [holder] = await tx
    .select({ id: organizationDomains.id })
    .from(organizationDomains)
    .where(
      and(
        eq(organizationDomains.environmentId, scope.env.id),
        eq(organizationDomains.domain, domain),
        eq(organizationDomains.state, 'verified'),
        ne(organizationDomains.organizationId, organizationId),
      ),
    )
    .limit(1);
  if (holder) {
    throw conflict(
      'domain_verified_by_other_organization',
      `The domain '${domain}' is verified by another organization.`,
    );
  }
}

/**
 * Moves the other organizations' pending claims on a just-verified domain to `failed`, the
 * one rule that follows every verification (DNS, manual or asserted through `domain_data`).
 */
async function failCompetingClaims(tx: Db, scope: Scope, verified: DomainRow): Promise<DomainRow[]> {
  const failed = await tx
    .update(organizationDomains)
    .set({
      state: 'failed',
      verificationFailedReason: 'domain_verified_by_other_organization',
      nextCheckAt: null,
      updatedAt: scope.now(),
    })
    .where(
      and(
        eq(organizationDomains.environmentId, scope.env.id),
        eq(organizationDomains.domain, verified.domain),
        eq(organizationDomains.state, 'pending'),
        ne(organizationDomains.id, verified.id),
      ),
    )
    .returning();
  for (const row of failed.sort((a, b) => (a.id < b.id ? -1 : 1))) await recordVerificationFailed(tx, scope, row);
  return failed;
}

/** `organization_domain.verification_failed` carries upstream's `{reason, organization_domain}`. */
async function recordVerificationFailed(tx: Db, scope: Scope, row: DomainRow): Promise<void> {
  await recordEvent(
    tx,
    scope,
    'organization_domain.verification_failed',
    { reason: row.verificationFailedReason, organization_domain: toOrganizationDomain(row) },
    row.organizationId,
  );
}

/**
 * The one transition to `verified` (DNS check, manual verification, or an upgrade through
 * `domain_data`): the claim turns verified, competing pending claims fail, events follow.
 */
async function markVerified(
  tx: Db,
  scope: Scope,
  row: DomainRow,
  strategy: 'dns' | 'manual',
  extra: Partial<typeof organizationDomains.$inferInsert> = {},
): Promise<DomainRow> {
  await assertNotVerifiedElsewhere(tx, scope, row.organizationId, row.domain);
  const [updated] = await tx
    .update(organizationDomains)
    .set({
      ...extra,
      state: 'verified',
      verificationStrategy: strategy,
      verificationFailedReason: null,
      verificationError: null,
      nextCheckAt: null,
      updatedAt: scope.now(),
    })
    .where(eq(organizationDomains.id, row.id))
    .returning();
  if (!updated) throw notFound('organization_domain', row.id);
  await recordEvent(tx, scope, 'organization_domain.verified', toOrganizationDomain(updated));
  await failCompetingClaims(tx, scope, updated);
  return updated;
}

/**
 * Claims a domain for an organization inside the caller's transaction: a new pending or
 * verified claim, or an upgrade of the organization's pending claim to verified. Returns the
 * claim, or undefined when the organization already holds the domain in that state.
 */
export async function claimDomain(
  tx: Db,
  scope: Scope,
  organizationId: string,
  domain: string,
  state: 'pending' | 'verified',
  strategy: 'dns' | 'manual',
): Promise<DomainRow | undefined> {
  const now = scope.now();
  // A domain another organization holds verified cannot be claimed at all (pending claims
  // included): the contract's 409, the same through domain_data as through POST.
  await assertNotVerifiedElsewhere(tx, scope, organizationId, domain);
  const [existing] = await tx
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.organizationId, organizationId), eq(organizationDomains.domain, domain)))
    .limit(1);
  if (existing) {
    if (state === 'pending' || existing.state === 'verified') return undefined;
    return markVerified(tx, scope, existing, strategy);
  }
  await countDomain(tx, scope, organizationId);
  const [row] = await tx
    .insert(organizationDomains)
    .values({
      id: newId('organizationDomain'),
      environmentId: scope.env.id,
      organizationId,
      domain,
      state,
      verificationStrategy: strategy,
      verificationPrefix: newVerificationPrefix(),
      verificationToken: randomBase62(32),
      verificationStartedAt: now,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) return undefined;
  await recordEvent(tx, scope, 'organization_domain.created', toOrganizationDomain(row));
  if (row.state === 'verified') {
    await recordEvent(tx, scope, 'organization_domain.verified', toOrganizationDomain(row));
    await failCompetingClaims(tx, scope, row);
  }
  return row;
}

/**
 * Counts a new domain of the organization, or refuses it at the domains-per-organization quota.
 * The UPDATE's condition is re-checked on the newest row after a concurrent writer commits, so
 * concurrent creates never overshoot.
 */
async function countDomain(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  const limit = quotaLimit(scope.deps, 'domainsPerOrganization');
  const counted = await tx
    .update(organizations)
    .set({ domainCount: sql`${organizations.domainCount} + 1` })
    .where(and(eq(organizations.id, organizationId), sql`${organizations.domainCount} < ${limit}`))
    .returning({ id: organizations.id });
  if (counted.length === 0) throw quotaError(scope.deps, 'domainsPerOrganization');
}

async function loadDomain(db: Db, scope: Scope, id: string): Promise<DomainRow> {
  const [row] = await db
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.id, id), eq(organizationDomains.environmentId, scope.env.id)))
    .for('update')
    .limit(1);
  if (!row) throw notFound('organization_domain', id);
  return row;
}

/**
 * Create domain as one autocommit statement (see `writeWithEvent`): the claim and its event.
 * `counted` bumps the organization's domain count, which also locks the row as the transaction
 * below locks it. It writes nothing when the organization is not there, is at its domain quota,
 * another organization holds the domain verified, or this one has it already: the transaction
 * then runs and answers (404, 422 or 409). The quota condition is re-checked on the newest row
 * after a concurrent create commits; the other checks read the statement's snapshot, and a claim
 * made meanwhile loses at the unique index, mapped to the same 409.
 */
const claimWithEvent = writeWithEvent(
  ['id', 'environmentId', 'organizationId', 'domain', 'prefix', 'token', 'at', 'limit'],
  (
    v,
  ) => sql`insert into ${organizationDomains} (id, environment_id, organization_id, domain, state, verification_strategy, verification_prefix, verification_token, verification_started_at, created_at, updated_at)
      select ${v.id}, o.environment_id, o.id, ${v.domain}, 'pending', 'dns', ${v.prefix}, ${v.token}, ${v.at}::timestamptz, ${v.at}::timestamptz, ${v.at}::timestamptz
      from counted as o
      returning id`,
  (v) => sql`counted as (
      update ${organizations} as o set domain_count = o.domain_count + 1
      where o.environment_id = ${v.environmentId} and o.id = ${v.organizationId} and o.domain_count < ${v.limit}::int
        and not exists (select 1 from ${organizationDomains} where environment_id = ${v.environmentId} and domain = ${v.domain} and state = 'verified' and organization_id <> o.id)
        and not exists (select 1 from ${organizationDomains} where organization_id = o.id and domain = ${v.domain})
      returning o.id, o.environment_id
    )`,
);

async function createInOneStatement(
  scope: Scope,
  organizationId: string,
  domain: string,
): Promise<OrganizationDomain | undefined> {
  const now = scope.now();
  const row: DomainRow = {
    id: newId('organizationDomain'),
    environmentId: scope.env.id,
    organizationId,
    domain,
    state: 'pending',
    verificationStrategy: 'dns',
    verificationPrefix: newVerificationPrefix(),
    verificationToken: randomBase62(32),
    verificationFailedReason: null,
    verificationStartedAt: now,
    nextCheckAt: null,
    lastCheckedAt: null,
    checkAttempts: 0,
    verificationError: null,
    createdAt: now,
    updatedAt: now,
  };
  const created = toOrganizationDomain(row);
  const written = await claimWithEvent(
    scope,
    {
      id: row.id,
      environmentId: row.environmentId,
      organizationId,
      domain,
      prefix: row.verificationPrefix,
      token: row.verificationToken,
      at: now.toISOString(),
      limit: quotaLimit(scope.deps, 'domainsPerOrganization'),
    },
    { id: newId('event'), name: 'organization_domain.created', data: created, organizationId, now },
  );
  return written ? created : undefined;
}

export async function createOrganizationDomain(
  scope: Scope,
  input: { organization_id: string; domain: string },
): Promise<OrganizationDomain> {
  const domain = requireValidDomain(input.domain, 'domain');
  // One statement for the usual claim; a claim the statement does not write takes the transaction.
  const created = await createInOneStatement(scope, input.organization_id, domain);
  if (created) return created;
  return scope.db.transaction(async (tx) => {
    const organization = await requireOrganization(tx, scope, input.organization_id, 'update');
    const row = await claimDomain(tx, scope, organization.id, domain, 'pending', 'dns');
    if (!row) throw conflict('domain_already_exists', `The organization already has the domain '${domain}'.`);
    return toOrganizationDomain(row);
  });
}

export async function getOrganizationDomain(scope: Scope, id: string): Promise<OrganizationDomain> {
  return toOrganizationDomain(await loadDomain(scope.db, scope, id));
}

/**
 * Starts (or restarts) DNS verification: the domain stays `pending` and is due for a check
 * now. A failed claim starts a new verification period; a verified one is 400.
 */
export async function verifyOrganizationDomain(scope: Scope, id: string): Promise<OrganizationDomain> {
  return scope.db.transaction(async (tx) => {
    const row = await loadDomain(tx, scope, id);
    if (row.state === 'verified') {
      throw badRequest('domain_already_verified', `The domain '${row.domain}' is already verified.`);
    }
    const now = scope.now();
    if (row.state === 'failed') await assertNotVerifiedElsewhere(tx, scope, row.organizationId, row.domain);
    // A check not yet scheduled joins the environment's queue: at most the pending-verifications
    // quota, counted under the environment's lock so concurrent verify calls cannot overshoot.
    if (row.state === 'failed' || row.nextCheckAt === null) {
      await lockEnvironment(tx, scope.env.id);
      await assertBelowQuota(
        tx,
        scope.deps,
        'pendingVerificationsPerEnvironment',
        organizationDomains,
        and(
          eq(organizationDomains.environmentId, scope.env.id),
          // A literal: the generic plan then uses organization_domains_due_idx (partial on it).
          equalsLiteral(organizationDomains.state, 'pending'),
          isNotNull(organizationDomains.nextCheckAt),
        ),
      );
    }
    const [updated] = await tx
      .update(organizationDomains)
      .set({
        state: 'pending',
        verificationStrategy: 'dns',
        verificationFailedReason: null,
        nextCheckAt: now,
        ...(row.state === 'failed' ? { verificationStartedAt: now, checkAttempts: 0, verificationError: null } : {}),
        updatedAt: now,
      })
      .where(eq(organizationDomains.id, row.id))
      .returning();
    if (!updated) throw notFound('organization_domain', id);
    const wire = toOrganizationDomain(updated);
    await recordEvent(tx, scope, 'organization_domain.updated', wire);
    return wire;
  });
}

export async function deleteOrganizationDomain(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const [deleted] = await tx
      .delete(organizationDomains)
      .where(and(eq(organizationDomains.id, id), eq(organizationDomains.environmentId, scope.env.id)))
      .returning();
    if (!deleted) throw notFound('organization_domain', id);
    await tx
      .update(organizations)
      .set({ domainCount: sql`${organizations.domainCount} - 1` })
      .where(eq(organizations.id, deleted.organizationId));
    await recordEvent(tx, scope, 'organization_domain.deleted', toOrganizationDomain(deleted));
  });
}

/**
 * Manual verification (the specification's "admin console" path): a pending or failed claim
 * turns verified with strategy `manual`, through the same transition and events as DNS.
 */
export async function verifyOrganizationDomainManually(scope: Scope, id: string): Promise<OrganizationDomain> {
  return scope.db.transaction(async (tx) => {
    const row = await loadDomain(tx, scope, id);
    if (row.state === 'verified') {
      throw badRequest('domain_already_verified', `The domain '${row.domain}' is already verified.`);
    }
    return toOrganizationDomain(await markVerified(tx, scope, row, 'manual'));
  });
}

/** How long a domain may stay pending without a successful check before it fails. */
export const VERIFICATION_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

/** A domain taken by the DNS worker: what it needs to look up, never more. */
export interface DueDomain {
  id: string;
  environmentId: string;
  domain: string;
  verificationPrefix: string;
  verificationToken: string;
  checkAttempts: number;
  /** The lease the worker holds; its result applies only while the lease is unchanged. */
  leaseUntil: Date;
}

/**
 * Takes up to `limit` due pending domains for a DNS check, round-robin by environment: at most
 * `perEnvironment` of each, starting after `cursor`, so an environment with thousands of due
 * checks (or a resolver that never answers) cannot fill a round. Rows are locked with
 * `FOR UPDATE SKIP LOCKED` and leased (their `next_check_at` moved to `leaseUntil`) in one
 * short transaction, so two workers never take the same domain and no transaction stays open
 * across a DNS lookup. A worker that dies leaves a lease that expires. The domains come back
 * interleaved by environment, with the cursor for the next round.
 */
export async function takeDueDomains(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  fair: FairTake,
): Promise<{ domains: DueDomain[]; cursor: string }> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const d = organizationDomains;
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
    if (rows.length === 0) return { domains: [], cursor };
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
    const domains = interleaveByEnvironment(rows).flatMap(({ id }) => {
      const row = byId.get(id);
      if (!row) return [];
      return [
        {
          id: row.id,
          environmentId: row.environmentId,
          domain: row.domain,
          verificationPrefix: row.verificationPrefix,
          verificationToken: row.verificationToken,
          checkAttempts: row.checkAttempts,
          leaseUntil,
        },
      ];
    });
    return { domains, cursor };
  });
}

/** The outcome of one DNS check, as the worker saw it (never containing the token). */
export type DnsCheckResult = { matched: true } | { matched: false; error: string };

/**
 * Applies one DNS check to a leased domain: a match verifies it (and fails competing claims);
 * no match records the error and schedules the next check at `retryAt`, or fails the claim
 * with `domain_verification_period_expired` once the 30-day period is over. A result whose
 * lease was superseded (the domain was verified, deleted or re-scheduled meanwhile) is dropped.
 */
export async function applyDnsResult(
  scope: Scope,
  leased: Pick<DueDomain, 'id' | 'leaseUntil'>,
  result: DnsCheckResult,
  retryAt: Date,
): Promise<DomainRow['state'] | 'superseded'> {
  return scope.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(organizationDomains)
      .where(and(eq(organizationDomains.id, leased.id), eq(organizationDomains.environmentId, scope.env.id)))
      .for('update')
      .limit(1);
    if (!row) return 'superseded';
    if (row.state !== 'pending' || row.nextCheckAt?.getTime() !== leased.leaseUntil.getTime()) return 'superseded';
    const now = scope.now();
    const checked = { lastCheckedAt: now, checkAttempts: row.checkAttempts + 1 };
    if (result.matched) {
      try {
        // A savepoint, so that losing the race to another organization (our check or the
        // verified-domain unique index) leaves the transaction usable to record the loss.
        return (await tx.transaction((sp) => markVerified(sp as unknown as Db, scope, row, 'dns', checked))).state;
      } catch (error) {
        const lost = error instanceof ApiError ? error : fromDatabaseError(error);
        if (lost?.apiCode !== 'domain_verified_by_other_organization') throw error;
        const [failed] = await tx
          .update(organizationDomains)
          .set({
            ...checked,
            state: 'failed',
            verificationFailedReason: lost.apiCode,
            nextCheckAt: null,
            updatedAt: now,
          })
          .where(eq(organizationDomains.id, row.id))
          .returning();
        if (failed) await recordVerificationFailed(tx, scope, failed);
        return 'failed';
      }
    }
    const started = (row.verificationStartedAt ?? row.createdAt).getTime();
    if (now.getTime() - started >= VERIFICATION_PERIOD_MS) {
      const [failed] = await tx
        .update(organizationDomains)
        .set({
          ...checked,
          state: 'failed',
          verificationFailedReason: 'domain_verification_period_expired',
          verificationError: result.error,
          nextCheckAt: null,
          updatedAt: now,
        })
        .where(eq(organizationDomains.id, row.id))
        .returning();
      if (failed) await recordVerificationFailed(tx, scope, failed);
      return 'failed';
    }
    await tx
      .update(organizationDomains)
      .set({ ...checked, verificationError: result.error, nextCheckAt: retryAt })
      .where(eq(organizationDomains.id, row.id));
    return 'pending';
  });
}

/**
 * The environment a domain belongs to, for the admin surface (which sits above environments
 * and names a domain by id alone).
 */
export async function environmentOfDomain(db: Db, id: string): Promise<string> {
  const [row] = await db
    .select({ environmentId: organizationDomains.environmentId })
    .from(organizationDomains)
    .where(eq(organizationDomains.id, id))
    .limit(1);
  if (!row) throw notFound('organization_domain', id);
  return row.environmentId;
}
