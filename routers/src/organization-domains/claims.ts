import { randomBytes } from 'node:crypto';
import { type Db, newId } from '@atrium/db';
import { wireTime } from '../common/schemas.ts';
import { checkDomain } from '../domain-claims/rules.ts';
import type { DomainDataEntry, OrganizationDomain } from '../domain-claims/schemas.ts';
import { recordEvent } from '../events/record.ts';
import { conflict, type FieldError, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62 } from '../lib/random.ts';
import { quotaError, quotaLimit } from '../quotas.ts';
import {
  type DomainChanges,
  type DomainRecord,
  type DomainRow,
  domainCounter,
  findClaim,
  insertClaim,
  isVerifiedElsewhere,
  updateClaim,
  updatePendingClaims,
} from './store.ts';

/** The single place that turns a domain claim into its wire shape. */
export function toOrganizationDomain(row: DomainRecord): OrganizationDomain {
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
    created_at: wireTime(row.createdAt),
    updated_at: wireTime(row.updatedAt),
  };
}

/** How a caller shows a domain claim: the API's object (`toOrganizationDomain`) or a client surface's. */
export type DomainView<T> = (row: DomainRow) => T;

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

/** The contract's 409 for a domain another organization of the environment holds verified. */
export const verifiedByOther = (domain: string) =>
  conflict('domain_verified_by_other_organization', `The domain '${domain}' is verified by another organization.`);

/** A new claim of `organizationId` on `domain`, with a fresh verification prefix and token. */
export function newClaim(
  scope: Scope,
  organizationId: string,
  domain: string,
  state: 'pending' | 'verified',
  now: Date,
): DomainRow {
  return {
    id: newId('organizationDomain'),
    environmentId: scope.env.id,
    organizationId,
    domain,
    state,
    verificationStrategy: state === 'verified' ? 'manual' : 'dns',
    verificationPrefix: `atrium-domain-verification-${randomBytes(3).toString('hex')}`,
    verificationToken: randomBase62(32),
    verificationFailedReason: null,
    verificationStartedAt: now,
    nextCheckAt: null,
    lastCheckedAt: null,
    checkAttempts: 0,
    verificationError: null,
    nameServers: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** What a pending claim becomes when another organization verifies its domain. */
export const lostToVerified = (now: Date) =>
  ({
    state: 'failed',
    verificationFailedReason: 'domain_verified_by_other_organization',
    nextCheckAt: null,
    updatedAt: now,
  }) satisfies DomainChanges;

/** `organization_domain.verification_failed` carries upstream's `{reason, organization_domain}`. */
export function verificationFailedData(row: DomainRecord): Record<string, unknown> {
  return { reason: row.verificationFailedReason, organization_domain: toOrganizationDomain(row) };
}

/** Refuses a claim on a domain that another organization of the environment holds verified. */
async function assertNotVerifiedElsewhere(tx: Db, scope: Scope, organizationId: string, domain: string) {
  if (await isVerifiedElsewhere(tx, scope.env.id, organizationId, domain)) throw verifiedByOther(domain);
}

/**
 * Moves the other organizations' pending claims on a just-verified domain to `failed`, the
 * one rule that follows every verification (DNS, manual or asserted through `domain_data`).
 */
async function failCompetingClaims(tx: Db, scope: Scope, verified: DomainRow): Promise<void> {
  const failed = await updatePendingClaims(tx, scope.env.id, verified.domain, verified.id, lostToVerified(scope.now()));
  for (const row of failed.sort((a, b) => (a.id < b.id ? -1 : 1))) {
    await recordEvent(
      tx,
      scope,
      'organization_domain.verification_failed',
      verificationFailedData(row),
      row.organizationId,
    );
  }
}

/**
 * The one transition to `verified` (DNS check, manual verification, or an upgrade through
 * `domain_data`): the claim turns verified, competing pending claims fail, events follow.
 */
export async function markVerified(
  tx: Db,
  scope: Scope,
  row: DomainRow,
  strategy: 'dns' | 'manual',
  extra: DomainChanges = {},
): Promise<DomainRow> {
  await assertNotVerifiedElsewhere(tx, scope, row.organizationId, row.domain);
  const updated = await updateClaim(tx, row.id, {
    ...extra,
    state: 'verified',
    verificationStrategy: strategy,
    verificationFailedReason: null,
    verificationError: null,
    nextCheckAt: null,
    updatedAt: scope.now(),
  });
  if (!updated) throw notFound('organization_domain', row.id);
  await recordEvent(tx, scope, 'organization_domain.verified', toOrganizationDomain(updated));
  await failCompetingClaims(tx, scope, updated);
  return updated;
}

/**
 * Claims a domain for an existing organization inside the caller's transaction: a new pending
 * or verified claim, or an upgrade of the organization's pending claim to verified. Returns
 * the claim, or undefined when the organization already holds the domain in that state.
 */
export async function claimDomain(
  tx: Db,
  scope: Scope,
  organizationId: string,
  domain: string,
  state: 'pending' | 'verified',
): Promise<DomainRow | undefined> {
  // A domain another organization holds verified cannot be claimed at all (pending claims
  // included): the contract's 409, the same through domain_data as through POST.
  await assertNotVerifiedElsewhere(tx, scope, organizationId, domain);
  const existing = await findClaim(tx, organizationId, domain);
  if (existing) {
    if (state === 'pending' || existing.state === 'verified') return undefined;
    return markVerified(tx, scope, existing, 'manual');
  }
  if (!(await domainCounter().count(tx, organizationId, quotaLimit(scope.deps, 'domainsPerOrganization')))) {
    throw quotaError(scope.deps, 'domainsPerOrganization');
  }
  const row = await insertClaim(tx, newClaim(scope, organizationId, domain, state, scope.now()));
  if (!row) return undefined;
  await recordEvent(tx, scope, 'organization_domain.created', toOrganizationDomain(row));
  if (row.state === 'verified') {
    await recordEvent(tx, scope, 'organization_domain.verified', toOrganizationDomain(row));
    await failCompetingClaims(tx, scope, row);
  }
  return row;
}
