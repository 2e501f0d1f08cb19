import { type Db, type FairTake, newId, type PageParams } from '@atrium/db';
import { asList } from '../common/schemas.ts';
import { recordEvent } from '../events/record.ts';
import { ApiError, badRequest, conflict, fromDatabaseError, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { lockEnvironment, quotaError, quotaLimit } from '../quotas.ts';
import {
  type DomainView,
  markVerified,
  newClaim,
  requireValidDomain,
  toOrganizationDomain,
  verificationFailedData,
  verifiedByOther,
} from './claims.ts';
import type { OrganizationDomain } from './schemas.ts';
import {
  assertBelowPendingChecks,
  claimWithEvent,
  type DomainChanges,
  type DomainRow,
  deleteDomain,
  domainCounter,
  environmentIdOfDomain,
  findDomainForUpdate,
  isVerifiedElsewhere,
  leaseDueDomains,
  loadDomain,
  pageOfOrganizationDomains,
  updateClaim,
  whyClaimRefused,
} from './store.ts';

/** Tries of a create domain whose statement wrote nothing that no rule explains (a race). */
const CLAIM_TRIES = 3;

/**
 * Create domain: one statement writes the claim and its event (`claimWithEvent`). When it
 * writes nothing, the rules say why, in the order the contract checks them: the organization
 * (404), a domain verified elsewhere (409), the organization's own claim (409), the quota (422).
 */
export async function createOrganizationDomain<T>(
  scope: Scope,
  input: { organization_id: string; domain: string },
  view: DomainView<T>,
): Promise<T> {
  const domain = requireValidDomain(input.domain, 'domain');
  const limit = quotaLimit(scope.deps, 'domainsPerOrganization');
  for (let attempt = 1; attempt <= CLAIM_TRIES; attempt++) {
    const created = await claimOnce(scope, input.organization_id, domain, limit);
    if (created) return view(created);
    const why = await whyClaimRefused(scope.db, scope.env.id, input.organization_id, domain);
    if (!why.organization) throw notFound('organization', input.organization_id);
    if (why.verifiedElsewhere) throw verifiedByOther(domain);
    if (why.claimed) throw conflict('domain_already_exists', `The organization already has the domain '${domain}'.`);
    if (why.domainCount >= limit) throw quotaError(scope.deps, 'domainsPerOrganization');
  }
  throw conflict('conflict', 'The request conflicted with a concurrent request; retry it.');
}

/** One run of the create statement; the claim as written, undefined when it wrote nothing. */
async function claimOnce(
  scope: Scope,
  organizationId: string,
  domain: string,
  limit: number,
): Promise<DomainRow | undefined> {
  const now = scope.now();
  const claim = newClaim(scope, organizationId, domain, 'pending', now);
  const values = {
    id: claim.id,
    environmentId: scope.env.id,
    organizationId,
    domain,
    prefix: claim.verificationPrefix,
    token: claim.verificationToken,
    at: now.toISOString(),
    limit,
  };
  const data = toOrganizationDomain(claim);
  const event = { id: newId('event'), name: 'organization_domain.created', data, organizationId, now };
  return (await claimWithEvent(scope, values, event)) ? claim : undefined;
}

export async function getOrganizationDomain<T>(scope: Scope, id: string, view: DomainView<T>): Promise<T> {
  return view(await loadDomain(scope.db, scope.env.id, id));
}

/** One page of an organization's domains as the list envelope (the client surfaces list them). */
export async function listOrganizationDomains<T>(
  scope: Scope,
  organizationId: string,
  params: PageParams,
  view: DomainView<T>,
) {
  return asList(await pageOfOrganizationDomains(scope.db, scope.env.id, organizationId, params), view);
}

/**
 * Starts (or restarts) DNS verification: the domain stays `pending` and is due for a check
 * now. A failed claim starts a new verification period; a verified one is 400. With
 * `onlyFailed` (the widgets' "Restart verification") anything but a failed claim is 409.
 */
export async function verifyOrganizationDomain<T>(
  scope: Scope,
  id: string,
  view: DomainView<T>,
  options: { onlyFailed?: boolean } = {},
): Promise<T> {
  return scope.db.transaction(async (tx) => {
    const row = await loadDomain(tx, scope.env.id, id, 'update');
    if (options.onlyFailed && row.state !== 'failed') {
      throw conflict(
        'domain_not_failed',
        `Only a failed domain restarts verification; '${row.domain}' is ${row.state}.`,
      );
    }
    if (row.state === 'verified') {
      throw badRequest('domain_already_verified', `The domain '${row.domain}' is already verified.`);
    }
    const now = scope.now();
    if (row.state === 'failed') await assertClaimable(tx, scope, row);
    // A check not yet scheduled joins the environment's queue: at most the pending-verifications
    // quota, counted under the environment's lock so concurrent verify calls cannot overshoot.
    if (row.state === 'failed' || row.nextCheckAt === null) {
      await lockEnvironment(tx, scope.env.id);
      await assertBelowPendingChecks(tx, scope.deps, scope.env.id);
    }
    const updated = await updateClaim(tx, row.id, {
      state: 'pending',
      verificationStrategy: 'dns',
      verificationFailedReason: null,
      nextCheckAt: now,
      ...(row.state === 'failed' ? { verificationStartedAt: now, checkAttempts: 0, verificationError: null } : {}),
      updatedAt: now,
    });
    if (!updated) throw notFound('organization_domain', id);
    await recordEvent(tx, scope, 'organization_domain.updated', toOrganizationDomain(updated));
    return view(updated);
  });
}

/** A failed claim restarts only while no other organization holds its domain verified. */
async function assertClaimable(tx: Db, scope: Scope, row: DomainRow): Promise<void> {
  if (await isVerifiedElsewhere(tx, scope.env.id, row.organizationId, row.domain)) throw verifiedByOther(row.domain);
}

/** Deletes a domain (event `organization_domain.deleted`); the domain as it was. */
export async function deleteOrganizationDomain<T>(scope: Scope, id: string, view: DomainView<T>): Promise<T> {
  return scope.db.transaction(async (tx) => {
    const deleted = await deleteDomain(tx, scope.env.id, id);
    if (!deleted) throw notFound('organization_domain', id);
    await domainCounter().uncount(tx, deleted.organizationId);
    await recordEvent(tx, scope, 'organization_domain.deleted', toOrganizationDomain(deleted));
    return view(deleted);
  });
}

/**
 * Manual verification (the specification's "admin console" path): a pending or failed claim
 * turns verified with strategy `manual`, through the same transition and events as DNS.
 */
export async function verifyOrganizationDomainManually(scope: Scope, id: string): Promise<OrganizationDomain> {
  return scope.db.transaction(async (tx) => {
    const row = await loadDomain(tx, scope.env.id, id, 'update');
    if (row.state === 'verified') {
      throw badRequest('domain_already_verified', `The domain '${row.domain}' is already verified.`);
    }
    return toOrganizationDomain(await markVerified(tx, scope, row, 'manual'));
  });
}

/** How long a domain may stay pending without a successful check before it fails, unless configured. */
export const DEFAULT_VERIFICATION_PERIOD_SECONDS = 30 * 24 * 60 * 60;

/** The verification window of this deployment (`DNS_VERIFICATION_PERIOD_SECONDS`), in ms. */
const verificationPeriodMs = (scope: Scope) =>
  (scope.deps.config.dnsVerificationPeriodSeconds ?? DEFAULT_VERIFICATION_PERIOD_SECONDS) * 1000;

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
 * checks (or a resolver that never answers) cannot fill a round. The rows are leased (their
 * `next_check_at` moved to the lease's end) in one short transaction, so two workers never take
 * the same domain and no transaction stays open across a DNS lookup; a dead worker's lease
 * expires. The domains come back interleaved by environment, with the cursor for the next round.
 */
export async function takeDueDomains(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  fair: FairTake,
): Promise<{ domains: DueDomain[]; cursor: string }> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const { rows, cursor } = await leaseDueDomains(db, now, limit, leaseUntil, fair);
  const domains = rows.map((row) => ({
    id: row.id,
    environmentId: row.environmentId,
    domain: row.domain,
    verificationPrefix: row.verificationPrefix,
    verificationToken: row.verificationToken,
    checkAttempts: row.checkAttempts,
    leaseUntil,
  }));
  return { domains, cursor };
}

/** The outcome of one DNS check, as the worker saw it (never containing the token). */
export type DnsCheckResult = ({ matched: true } | { matched: false; error: string }) & {
  /** The NS host names of the domain's zone, when a lookup found them (kept for the widgets' provider icon). */
  nameServers?: string[];
};

/** Fails a claim with `changes` and records `organization_domain.verification_failed`. */
async function failClaim(tx: Db, scope: Scope, id: string, changes: DomainChanges): Promise<void> {
  const failed = await updateClaim(tx, id, { ...changes, state: 'failed', nextCheckAt: null, updatedAt: scope.now() });
  if (failed) {
    await recordEvent(
      tx,
      scope,
      'organization_domain.verification_failed',
      verificationFailedData(failed),
      failed.organizationId,
    );
  }
}

/**
 * Applies one DNS check to a leased domain: a match verifies it (and fails competing claims);
 * no match records the error and schedules the next check at `retryAt`, or fails the claim
 * with `domain_verification_period_expired` once the verification period is over. A result whose
 * lease was superseded (the domain was verified, deleted or re-scheduled meanwhile) is dropped.
 */
export async function applyDnsResult(
  scope: Scope,
  leased: Pick<DueDomain, 'id' | 'leaseUntil'>,
  result: DnsCheckResult,
  retryAt: Date,
): Promise<DomainRow['state'] | 'superseded'> {
  return scope.db.transaction(async (tx) => {
    const row = await findDomainForUpdate(tx, scope.env.id, leased.id);
    if (!row) return 'superseded';
    if (row.state !== 'pending' || row.nextCheckAt?.getTime() !== leased.leaseUntil.getTime()) return 'superseded';
    const now = scope.now();
    const checked: DomainChanges = {
      lastCheckedAt: now,
      checkAttempts: row.checkAttempts + 1,
      ...(result.nameServers ? { nameServers: result.nameServers } : {}),
    };
    if (result.matched) {
      try {
        // A savepoint, so that losing the race to another organization (our check or the
        // verified-domain unique index) leaves the transaction usable to record the loss.
        return (await tx.transaction((sp) => markVerified(sp as unknown as Db, scope, row, 'dns', checked))).state;
      } catch (error) {
        const lost = error instanceof ApiError ? error : fromDatabaseError(error);
        if (lost?.apiCode !== 'domain_verified_by_other_organization') throw error;
        await failClaim(tx, scope, row.id, { ...checked, verificationFailedReason: lost.apiCode });
        return 'failed';
      }
    }
    const started = (row.verificationStartedAt ?? row.createdAt).getTime();
    if (now.getTime() - started >= verificationPeriodMs(scope)) {
      await failClaim(tx, scope, row.id, {
        ...checked,
        verificationFailedReason: 'domain_verification_period_expired',
        verificationError: result.error,
      });
      return 'failed';
    }
    await updateClaim(tx, row.id, { ...checked, verificationError: result.error, nextCheckAt: retryAt });
    return 'pending';
  });
}

/**
 * The environment a domain belongs to, for the admin surface (which sits above environments
 * and names a domain by id alone).
 */
export async function environmentOfDomain(db: Db, id: string): Promise<string> {
  const environmentId = await environmentIdOfDomain(db, id);
  if (environmentId === undefined) throw notFound('organization_domain', id);
  return environmentId;
}
