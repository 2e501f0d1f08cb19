import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, pageParams, wireTime } from '../common/schemas.ts';
import { normalizeDomainForLookup } from '../domain-claims/rules.ts';
import type { DomainDataEntry } from '../domain-claims/schemas.ts';
import { recordEvent } from '../events/record.ts';
import { forgetLocally } from '../invalidation/service.ts';
import { conflict, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import {
  claimDomain,
  lostToVerified,
  newClaim,
  normalizeDomainData,
  toOrganizationDomain,
  verificationFailedData,
  verifiedByOther,
} from '../organization-domains/claims.ts';
import { type DomainRow, pendingClaimsOn, verifiedAmong } from '../organization-domains/store.ts';
import { quotaError, quotaLimit } from '../quotas.ts';
import type {
  CreateOrganizationInput,
  ListOrganizationsInput,
  Organization,
  UpdateOrganizationInput,
} from './schemas.ts';
import {
  type ClaimEvent,
  createWithEvent,
  deleteRow,
  findByExternalId,
  findById,
  getById,
  getSummaryById,
  listPage,
  loadOrganization,
  type NewClaim,
  type OrganizationRecord,
  type OrganizationSummary,
  updateRow,
} from './store.ts';

/** The single place that turns an organization (with its domains) into its wire shape. */
export function toOrganization(row: OrganizationRecord): Organization {
  return {
    object: 'organization',
    id: row.id,
    name: row.name,
    domains: row.domains.map(toOrganizationDomain),
    metadata: row.metadata,
    external_id: row.externalId,
    billing_customer_id: row.billingCustomerId,
    // Upstream's optional string: absent while unset (the SDK then reads `undefined`), never null.
    ...(row.billingCustomerId === null ? undefined : { stripe_customer_id: row.billingCustomerId }),
    allow_profiles_outside_organization: row.allowProfilesOutsideOrganization,
    created_at: wireTime(row.createdAt),
    updated_at: wireTime(row.updatedAt),
  };
}

export async function getOrganization(scope: Scope, id: string): Promise<Organization> {
  const found = await getById(scope.db, scope.env.id, id);
  if (!found) throw notFound('organization', id);
  return toOrganization(found);
}

/**
 * The organization's own fields (no domains, no metadata), timestamps on the wire: what the
 * client surfaces show of it, read without the domains.
 */
export async function getOrganizationSummary(scope: Scope, id: string): Promise<OrganizationSummary> {
  const found = await getSummaryById(scope.db, scope.env.id, id);
  if (!found) throw notFound('organization', id);
  return { ...found, createdAt: wireTime(found.createdAt), updatedAt: wireTime(found.updatedAt) };
}

export async function getOrganizationByExternalId(scope: Scope, externalId: string): Promise<Organization> {
  const found = await findByExternalId(scope.db, scope.env.id, externalId);
  if (!found) throw notFound('organization', externalId);
  return toOrganization(found);
}

export async function listOrganizations(scope: Scope, input: z.infer<typeof ListOrganizationsInput>) {
  const params = pageParams(input);
  const domains = input.domains?.map(normalizeDomainForLookup);
  const filter = domains && domains.length > 0 ? domains : undefined;
  return asList(await listPage(scope.db, params, scope.env.id, filter), toOrganization);
}

/**
 * Metadata with its keys in the order PostgreSQL's jsonb keeps them (shorter keys first, then by
 * their UTF-8 bytes), so an answer built from the written values reads the same as every later
 * read of the row.
 */
function inJsonbOrder(metadata: Record<string, string>): Record<string, string> {
  const bytes = (key: string) => Buffer.from(key, 'utf8');
  return Object.fromEntries(
    Object.entries(metadata).sort(
      ([a], [b]) => bytes(a).length - bytes(b).length || Buffer.compare(bytes(a), bytes(b)),
    ),
  );
}

/** Tries of a create whose statement wrote nothing that no rule explains (a claim made meanwhile). */
const CREATE_TRIES = 3;

/**
 * Create organization: one statement writes the organization, its `domain_data` claims and
 * every event (`createWithEvent`), with or without domain data. When it writes nothing, the
 * rules say why, entry by entry as the contract checks them: a domain verified by another
 * organization (409), then the domains-per-organization quota (422).
 */
export async function createOrganization(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationInput>,
): Promise<Organization> {
  const entries = normalizeDomainData(input.domain_data ?? []);
  const limit = quotaLimit(scope.deps, 'domainsPerOrganization');
  for (let attempt = 1; attempt <= CREATE_TRIES; attempt++) {
    // The pending claims a verified entry fails, read first: their events carry them.
    const verified = entries.filter((entry) => entry.state === 'verified').map((entry) => entry.domain);
    const competing = await pendingClaimsOn(scope.db, scope.env.id, verified);
    const created = await createOnce(scope, input, entries, competing, limit);
    if (created) return created;
    const held = await verifiedAmong(
      scope.db,
      scope.env.id,
      entries.map((entry) => entry.domain),
    );
    entries.forEach((entry, index) => {
      if (held.has(entry.domain)) throw verifiedByOther(entry.domain);
      if (index + 1 > limit) throw quotaError(scope.deps, 'domainsPerOrganization');
    });
  }
  throw conflict('conflict', 'The request conflicted with a concurrent request; retry it.');
}

/** One run of the create statement; undefined when it wrote nothing. */
async function createOnce(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationInput>,
  entries: DomainDataEntry[],
  competing: DomainRow[],
  limit: number,
): Promise<Organization | undefined> {
  const now = scope.now();
  const id = newId('organization');
  const claims = entries.map((entry) => newClaim(scope, id, entry.domain, entry.state, now));
  const organization = toOrganization({
    id,
    name: input.name,
    externalId: input.external_id ?? null,
    metadata: inJsonbOrder(input.metadata ?? {}),
    billingCustomerId: null,
    allowProfilesOutsideOrganization: input.allow_profiles_outside_organization ?? false,
    createdAt: now,
    updatedAt: now,
    domains: claims,
  });
  const written = await createWithEvent(
    scope,
    {
      id,
      environmentId: scope.env.id,
      name: organization.name,
      externalId: organization.external_id,
      metadata: JSON.stringify(organization.metadata),
      allowProfilesOutsideOrganization: organization.allow_profiles_outside_organization,
      at: now.toISOString(),
      limit,
      claims: claims.map(toNewClaim),
      events: claimEvents(claims, competing, now),
    },
    { id: newId('event'), name: 'organization.created', data: organization, organizationId: id, now },
  );
  return written ? organization : undefined;
}

const toNewClaim = (claim: DomainRow): NewClaim => ({
  id: claim.id,
  domain: claim.domain,
  state: claim.state === 'verified' ? 'verified' : 'pending',
  strategy: claim.verificationStrategy,
  prefix: claim.verificationPrefix,
  token: claim.verificationToken,
});

/**
 * The events of a new organization's claims, in the order a claim at a time records them:
 * `created`, then for a verified claim `verified` and the competing claims' `verification_failed`.
 */
function claimEvents(claims: DomainRow[], competing: DomainRow[], now: Date): ClaimEvent[] {
  const out: ClaimEvent[] = [];
  const event = (event: string, organization: string, data: Record<string, unknown>, claim: string | null = null) =>
    out.push({ id: newId('event'), event, organization, data, claim });
  for (const claim of claims) {
    const wire = toOrganizationDomain(claim);
    event('organization_domain.created', claim.organizationId, wire);
    if (claim.state !== 'verified') continue;
    event('organization_domain.verified', claim.organizationId, wire);
    for (const lost of competing.filter((row) => row.domain === claim.domain)) {
      const failed = Object.assign({}, lost, lostToVerified(now));
      event('organization_domain.verification_failed', lost.organizationId, verificationFailedData(failed), lost.id);
    }
  }
  return out;
}

async function applyDomainData(tx: Scope['db'], scope: Scope, organizationId: string, entries: DomainDataEntry[]) {
  for (const entry of entries) await claimDomain(tx, scope, organizationId, entry.domain, entry.state);
}

/**
 * The billing customer id an update sets, under either of its names (`billing_customer_id`, the
 * specification's; `stripe_customer_id`, the SDK's); undefined when neither is sent. Both sent
 * with different values is 422: there is one stored value.
 */
function billingCustomerIdOf(input: z.infer<typeof UpdateOrganizationInput>): string | null | undefined {
  const { billing_customer_id: billing, stripe_customer_id: stripe } = input;
  if (billing !== undefined && stripe !== undefined && billing !== stripe) {
    throw invalid([
      {
        field: 'stripe_customer_id',
        code: 'billing_customer_id_conflict',
        message: 'billing_customer_id and stripe_customer_id name one value; send one, or the same in both',
      },
    ]);
  }
  return billing !== undefined ? billing : stripe;
}

/** The organization's changes an update asks for, as stored columns. */
function changesOf(input: z.infer<typeof UpdateOrganizationInput>, now: Date) {
  const changes: Parameters<typeof updateRow>[2] = { updatedAt: now };
  if (input.name !== undefined) changes.name = input.name;
  if (input.allow_profiles_outside_organization !== undefined) {
    changes.allowProfilesOutsideOrganization = input.allow_profiles_outside_organization;
  }
  const billing = billingCustomerIdOf(input);
  if (billing !== undefined) changes.billingCustomerId = billing;
  if (input.external_id !== undefined) changes.externalId = input.external_id;
  if (input.metadata !== undefined) {
    // The supplied object replaces the metadata; a null value removes its key.
    const next: Record<string, string> = {};
    for (const [key, value] of Object.entries(input.metadata)) if (value !== null) next[key] = value;
    changes.metadata = next;
  }
  return changes;
}

export async function updateOrganization(
  scope: Scope,
  input: z.infer<typeof UpdateOrganizationInput>,
): Promise<Organization> {
  const domainData = normalizeDomainData(input.domain_data ?? []);
  return scope.db.transaction(async (tx) => {
    const current = await loadOrganization(tx, scope.env.id, input.id, 'update');
    await updateRow(tx, current.id, changesOf(input, scope.now()));
    await applyDomainData(tx, scope, current.id, domainData);
    const updated = await findById(tx, scope.env.id, current.id);
    if (!updated) throw notFound('organization', input.id);
    const wire = toOrganization(updated);
    await recordEvent(tx, scope, 'organization.updated', wire, wire.id);
    return wire;
  });
}

/**
 * Deletes the organization; its domains (and, through foreign keys, everything it owns) go
 * with it. One `organization.deleted` event carries the organization as it was.
 */
export async function deleteOrganization(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const existing = await findById(tx, scope.env.id, id);
    if (!existing || !(await deleteRow(tx, scope.env.id, id))) throw notFound('organization', id);
    await recordEvent(tx, scope, 'organization.deleted', toOrganization(existing), existing.id);
  });
  // Its directories went with it: this process's cache serves their SCIM tokens no more (others
  // within apiKeyCacheTtlMs; no notification, so a delete costs no statement more).
  forgetLocally(scope.deps, 'organization', id);
}
