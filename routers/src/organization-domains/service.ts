import { randomBytes } from 'node:crypto';
import { type Db, newId, organizationDomains, organizations } from '@atrium/db';
import { and, eq, ne } from 'drizzle-orm';
import { iso } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { badRequest, conflict, type FieldError, invalid, notFound } from '../errors.ts';
import { randomBase62 } from '../lib/random.ts';
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
  return tx
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
  if (state === 'verified') await assertNotVerifiedElsewhere(tx, scope, organizationId, domain);
  const [existing] = await tx
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.organizationId, organizationId), eq(organizationDomains.domain, domain)))
    .limit(1);
  let row: DomainRow | undefined;
  if (existing) {
    if (state === 'pending' || existing.state === 'verified') return undefined;
    [row] = await tx
      .update(organizationDomains)
      .set({
        state: 'verified',
        verificationStrategy: strategy,
        verificationFailedReason: null,
        nextCheckAt: null,
        updatedAt: now,
      })
      .where(eq(organizationDomains.id, existing.id))
      .returning();
  } else {
    [row] = await tx
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
  }
  if (row?.state === 'verified') await failCompetingClaims(tx, scope, row);
  return row;
}

async function loadDomain(db: Db, scope: Scope, id: string): Promise<DomainRow> {
  const [row] = await db
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.id, id), eq(organizationDomains.environmentId, scope.env.id)))
    .limit(1);
  if (!row) throw notFound('organization_domain', id);
  return row;
}

export async function createOrganizationDomain(
  scope: Scope,
  input: { organization_id: string; domain: string },
): Promise<OrganizationDomain> {
  const domain = requireValidDomain(input.domain, 'domain');
  return scope.db.transaction(async (tx) => {
    const [organization] = await tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(eq(organizations.id, input.organization_id), eq(organizations.environmentId, scope.env.id)))
      .for('update')
      .limit(1);
    if (!organization) throw notFound('organization', input.organization_id);
    await assertNotVerifiedElsewhere(tx, scope, organization.id, domain);
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
    return toOrganizationDomain(updated);
  });
}

export async function deleteOrganizationDomain(scope: Scope, id: string): Promise<void> {
  const deleted = await scope.db
    .delete(organizationDomains)
    .where(and(eq(organizationDomains.id, id), eq(organizationDomains.environmentId, scope.env.id)))
    .returning({ id: organizationDomains.id });
  if (deleted.length === 0) throw notFound('organization_domain', id);
}
