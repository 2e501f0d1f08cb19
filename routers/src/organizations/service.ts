import { type Db, newId, organizationDomains, organizations, paginate } from '@atrium/db';
import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { normalizeDomainForLookup } from '../organization-domains/domain-rules.ts';
import type { DomainDataEntry } from '../organization-domains/schemas.ts';
import { claimDomain, normalizeDomainData, toOrganizationDomain } from '../organization-domains/service.ts';
import type {
  CreateOrganizationInput,
  ListOrganizationsInput,
  Organization,
  UpdateOrganizationInput,
} from './schemas.ts';

type OrganizationRow = typeof organizations.$inferSelect;
type DomainRow = typeof organizationDomains.$inferSelect;

/** The single place that turns an organization row (with its domains) into its wire shape. */
export function toOrganization(row: OrganizationRow & { domains: DomainRow[] }): Organization {
  return {
    object: 'organization',
    id: row.id,
    name: row.name,
    domains: row.domains.map(toOrganizationDomain),
    metadata: row.metadata,
    external_id: row.externalId,
    billing_customer_id: row.billingCustomerId,
    allow_profiles_outside_organization: row.allowProfilesOutsideOrganization,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const withDomains = { domains: { orderBy: [asc(organizationDomains.id)] } } satisfies { domains: { orderBy: SQL[] } };

/** One round trip: the organization and its domains, scoped by environment. */
async function findOrganization(db: Db, scope: Scope, where: SQL | undefined): Promise<Organization | undefined> {
  const row = await db.query.organizations.findFirst({
    where: and(eq(organizations.environmentId, scope.env.id), where),
    with: withDomains,
  });
  return row ? toOrganization(row) : undefined;
}

export async function getOrganization(scope: Scope, id: string): Promise<Organization> {
  const found = await findOrganization(scope.db, scope, eq(organizations.id, id));
  if (!found) throw notFound('organization', id);
  return found;
}

export async function getOrganizationByExternalId(scope: Scope, externalId: string): Promise<Organization> {
  const found = await findOrganization(scope.db, scope, eq(organizations.externalId, externalId));
  if (!found) throw notFound('organization', externalId);
  return found;
}

export async function listOrganizations(scope: Scope, input: z.infer<typeof ListOrganizationsInput>) {
  const params = pageParams(input);
  const domains = input.domains?.map(normalizeDomainForLookup);
  const filter =
    domains && domains.length > 0
      ? inArray(
          organizations.id,
          scope.db
            .select({ id: organizationDomains.organizationId })
            .from(organizationDomains)
            .where(
              and(eq(organizationDomains.environmentId, scope.env.id), inArray(organizationDomains.domain, domains)),
            ),
        )
      : undefined;
  const page = await paginate(
    params,
    organizations.id,
    (q) =>
      scope.db.query.organizations.findMany({
        where: and(eq(organizations.environmentId, scope.env.id), filter, q.keyset),
        orderBy: [q.orderBy],
        limit: q.limit,
        with: withDomains,
      }),
    (row) => row.id,
  );
  return { object: 'list' as const, data: page.data.map(toOrganization), list_metadata: page.list_metadata };
}

async function applyDomainData(tx: Db, scope: Scope, organizationId: string, entries: DomainDataEntry[]) {
  for (const entry of entries) {
    await claimDomain(
      tx,
      scope,
      organizationId,
      entry.domain,
      entry.state,
      entry.state === 'verified' ? 'manual' : 'dns',
    );
  }
}

export async function createOrganization(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationInput>,
): Promise<Organization> {
  const domainData = normalizeDomainData(input.domain_data ?? []);
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const id = newId('organization');
    await tx.insert(organizations).values({
      id,
      environmentId: scope.env.id,
      name: input.name,
      externalId: input.external_id ?? null,
      metadata: input.metadata ?? {},
      allowProfilesOutsideOrganization: input.allow_profiles_outside_organization ?? false,
      createdAt: now,
      updatedAt: now,
    });
    await applyDomainData(tx, scope, id, domainData);
    const created = await findOrganization(tx, scope, eq(organizations.id, id));
    if (!created) throw notFound('organization', id);
    await recordEvent(tx, scope, 'organization.created', created, created.id);
    return created;
  });
}

export async function updateOrganization(
  scope: Scope,
  input: z.infer<typeof UpdateOrganizationInput>,
): Promise<Organization> {
  const domainData = normalizeDomainData(input.domain_data ?? []);
  return scope.db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(organizations)
      .where(and(eq(organizations.id, input.id), eq(organizations.environmentId, scope.env.id)))
      .for('update')
      .limit(1);
    if (!current) throw notFound('organization', input.id);

    const changes: Partial<typeof organizations.$inferInsert> = { updatedAt: scope.now() };
    if (input.name !== undefined) changes.name = input.name;
    if (input.allow_profiles_outside_organization !== undefined) {
      changes.allowProfilesOutsideOrganization = input.allow_profiles_outside_organization;
    }
    const billing = input.billing_customer_id !== undefined ? input.billing_customer_id : input.stripe_customer_id;
    if (billing !== undefined) changes.billingCustomerId = billing;
    if (input.external_id !== undefined) changes.externalId = input.external_id;
    if (input.metadata !== undefined) {
      // The supplied object replaces the metadata; a null value removes its key.
      const next: Record<string, string> = {};
      for (const [key, value] of Object.entries(input.metadata)) if (value !== null) next[key] = value;
      changes.metadata = next;
    }
    await tx.update(organizations).set(changes).where(eq(organizations.id, current.id));
    await applyDomainData(tx, scope, current.id, domainData);
    const updated = await findOrganization(tx, scope, eq(organizations.id, current.id));
    if (!updated) throw notFound('organization', input.id);
    await recordEvent(tx, scope, 'organization.updated', updated, updated.id);
    return updated;
  });
}

/**
 * Deletes the organization; its domains (and, through foreign keys, everything it owns) go
 * with it. One `organization.deleted` event carries the organization as it was.
 */
export async function deleteOrganization(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const existing = await findOrganization(tx, scope, eq(organizations.id, id));
    if (!existing) throw notFound('organization', id);
    const deleted = await tx
      .delete(organizations)
      .where(and(eq(organizations.id, id), eq(organizations.environmentId, scope.env.id)))
      .returning({ id: organizations.id });
    if (deleted.length === 0) throw notFound('organization', id);
    await recordEvent(tx, scope, 'organization.deleted', existing, existing.id);
  });
}
