import {
  type Db,
  type KeysetOp,
  keysetCondition,
  newId,
  organizationDomains,
  organizations,
  type PageQuery,
  paginate,
  perHandle,
} from '@atrium/db';
import { and, asc, desc, eq, getTableName, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { z } from 'zod';
import { asList, iso, isoOfJson, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { recordEvent, writeWithEvent } from '../events/record.ts';
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
export function toOrganization(row: Omit<OrganizationRow, 'domainCount'> & { domains: DomainRow[] }): Organization {
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

// Columns qualified by their table: Drizzle writes a select's own fields unqualified, and the
// domains subquery must name the outer organization's id.
const q = (column: AnyPgColumn) => sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;

/**
 * An organization with its domains as one JSON array, built by PostgreSQL and read by
 * `fromJson` below: the reads' hot path. Drizzle's relational mapping (a per-field entity check
 * for every column of every row) and the Date round trip of four timestamps per organization
 * were over a third of a list's CPU (profiled at `limit=100`); this is one JSON.parse and a
 * plain loop. The order of the fields is the order `fromJson` reads.
 */
const organizationJson = sql<OrganizationJson>`json_build_array(${q(organizations.id)}, ${q(organizations.name)}, ${q(organizations.metadata)}, ${q(organizations.externalId)}, ${q(organizations.billingCustomerId)}, ${q(organizations.allowProfilesOutsideOrganization)}, ${q(organizations.createdAt)}, ${q(organizations.updatedAt)}, (
  select coalesce(json_agg(json_build_array(${q(organizationDomains.id)}, ${q(organizationDomains.organizationId)}, ${q(organizationDomains.domain)}, ${q(organizationDomains.state)}, ${q(organizationDomains.verificationStrategy)}, ${q(organizationDomains.verificationPrefix)}, ${q(organizationDomains.verificationToken)}, ${q(organizationDomains.verificationFailedReason)}, ${q(organizationDomains.createdAt)}, ${q(organizationDomains.updatedAt)}) order by ${q(organizationDomains.id)}), '[]'::json)
  from ${organizationDomains} where ${q(organizationDomains.organizationId)} = ${q(organizations.id)}))`;

type DomainJson = [
  id: string,
  organizationId: string,
  domain: string,
  state: Organization['domains'][number]['state'],
  verificationStrategy: Organization['domains'][number]['verification_strategy'],
  verificationPrefix: string,
  verificationToken: string,
  verificationFailedReason: Organization['domains'][number]['verification_failed_reason'],
  createdAt: string,
  updatedAt: string,
];
type OrganizationJson = [
  id: string,
  name: string,
  metadata: Record<string, string>,
  externalId: string | null,
  billingCustomerId: string | null,
  allowProfilesOutsideOrganization: boolean,
  createdAt: string,
  updatedAt: string,
  domains: DomainJson[],
];

/** The wire shape of `organizationJson`; the same answer `toOrganization` gives for the row. */
function fromJson(o: OrganizationJson): Organization {
  const domains: Organization['domains'] = [];
  for (const d of o[8]) {
    domains.push({
      object: 'organization_domain',
      id: d[0],
      organization_id: d[1],
      domain: d[2],
      state: d[3],
      verification_strategy: d[4],
      verification_prefix: d[5],
      verification_token: d[6],
      verification_failed_reason: d[7],
      created_at: isoOfJson(d[8]),
      updated_at: isoOfJson(d[9]),
    });
  }
  return {
    object: 'organization',
    id: o[0],
    name: o[1],
    domains,
    metadata: o[2],
    external_id: o[3],
    billing_customer_id: o[4],
    allow_profiles_outside_organization: o[5],
    created_at: isoOfJson(o[6]),
    updated_at: isoOfJson(o[7]),
  };
}

/**
 * The hot reads as prepared statements, built once per database handle (`perHandle`): Drizzle's
 * query builder costs more CPU per request than the query itself (profiled).
 */
function prepareReads(db: Db) {
  const env = sql.placeholder('env');
  const byId = db
    .select({ o: organizationJson })
    .from(organizations)
    .where(and(eq(organizations.environmentId, env), eq(organizations.id, sql.placeholder('id'))))
    .prepare('organizations_get');
  const lists = new Map<string, ReturnType<typeof prepareList>>();
  // The domains filter: organizations owning any of the (normalised) domains, as one array parameter.
  const ownsDomain = sql`${organizations.id} = any(array(
    select ${organizationDomains.organizationId} from ${organizationDomains}
    where ${organizationDomains.environmentId} = ${env} and ${organizationDomains.domain} = any(${sql.placeholder('domains')}::text[])))`;
  function prepareList(ascending: boolean, op: KeysetOp | undefined, filtered: boolean) {
    return (
      db
        .select({ o: organizationJson })
        .from(organizations)
        .where(
          and(
            // A range rather than `=`: PostgreSQL drops an ORDER BY column that an equality pins to a
            // constant, and then walks the primary key backwards skipping every newer row of other
            // environments (measured: 1,537 rows skipped for an 11-row page). With a range, only
            // organizations_environment_id_idx (environment_id, id) yields the order without a sort.
            gte(organizations.environmentId, env),
            lte(organizations.environmentId, env),
            filtered ? ownsDomain : undefined,
            keysetCondition(organizations.id, op, sql.placeholder('cursor')),
          ),
        )
        // The same order as by id alone within one environment.
        .orderBy(
          ...(ascending
            ? [asc(organizations.environmentId), asc(organizations.id)]
            : [desc(organizations.environmentId), desc(organizations.id)]),
        )
        .limit(sql.placeholder('limit'))
        .prepare(`organizations_list_${ascending ? 'asc' : 'desc'}_${op ?? 'first'}${filtered ? '_domains' : ''}`)
    );
  }
  return {
    byId,
    /** One page (or probe) of the list; `domains` given means the domains filter. */
    async list(q: PageQuery, environmentId: string, domains: string[] | undefined): Promise<Organization[]> {
      const { ascending, cursor } = q.shape;
      const name = `${ascending}:${cursor?.op ?? ''}:${domains !== undefined}`;
      let statement = lists.get(name);
      if (!statement) {
        statement = prepareList(ascending, cursor?.op, domains !== undefined);
        lists.set(name, statement);
      }
      const rows = await statement.execute({ env: environmentId, cursor: cursor?.value, limit: q.limit, domains });
      return rows.map((row) => fromJson(row.o));
    },
  };
}

const reads = perHandle(prepareReads);

/** One round trip: the organization and its domains, scoped by environment. */
async function findOrganization(db: Db, scope: Scope, where: SQL | undefined): Promise<Organization | undefined> {
  const [row] = await db
    .select({ o: organizationJson })
    .from(organizations)
    .where(and(eq(organizations.environmentId, scope.env.id), where))
    .limit(1);
  return row ? fromJson(row.o) : undefined;
}

export async function getOrganization(scope: Scope, id: string): Promise<Organization> {
  const [row] = await reads(scope.db).byId.execute({ env: scope.env.id, id });
  if (!row) throw notFound('organization', id);
  return fromJson(row.o);
}

export async function getOrganizationByExternalId(scope: Scope, externalId: string): Promise<Organization> {
  const found = await findOrganization(scope.db, scope, eq(organizations.externalId, externalId));
  if (!found) throw notFound('organization', externalId);
  return found;
}

export async function listOrganizations(scope: Scope, input: z.infer<typeof ListOrganizationsInput>) {
  const params = pageParams(input);
  const domains = input.domains?.map(normalizeDomainForLookup);
  const filter = domains && domains.length > 0 ? domains : undefined;
  const page = await paginate(
    params,
    organizations.id,
    (q) => reads(scope.db).list(q, scope.env.id, filter),
    (organization) => organization.id,
  );
  return asList(page, (organization) => organization);
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

/** Create organization without domain data as one autocommit statement (see `writeWithEvent`). */
const insertWithEvent = writeWithEvent(
  ['id', 'environmentId', 'name', 'externalId', 'metadata', 'allowProfilesOutsideOrganization', 'at'],
  (
    v,
  ) => sql`insert into ${organizations} (id, environment_id, name, external_id, metadata, billing_customer_id, allow_profiles_outside_organization, created_at, updated_at)
      values (${v.id}, ${v.environmentId}, ${v.name}, ${v.externalId}, ${v.metadata}::jsonb, null, ${v.allowProfilesOutsideOrganization}, ${v.at}::timestamptz, ${v.at}::timestamptz)
      returning id`,
);

async function createInOneStatement(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationInput>,
): Promise<Organization | undefined> {
  const now = scope.now();
  const row = {
    id: newId('organization'),
    environmentId: scope.env.id,
    name: input.name,
    externalId: input.external_id ?? null,
    metadata: inJsonbOrder(input.metadata ?? {}),
    billingCustomerId: null,
    allowProfilesOutsideOrganization: input.allow_profiles_outside_organization ?? false,
    createdAt: now,
    updatedAt: now,
  };
  const organization = toOrganization({ ...row, domains: [] });
  const written = await insertWithEvent(
    scope,
    {
      id: row.id,
      environmentId: row.environmentId,
      name: row.name,
      externalId: row.externalId,
      metadata: JSON.stringify(row.metadata),
      allowProfilesOutsideOrganization: row.allowProfilesOutsideOrganization,
      at: now.toISOString(),
    },
    { id: newId('event'), name: 'organization.created', data: organization, organizationId: row.id, now },
  );
  return written ? organization : undefined;
}

export async function createOrganization(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationInput>,
): Promise<Organization> {
  const domainData = normalizeDomainData(input.domain_data ?? []);
  // Without domain data, one statement: the organization and its event. An idempotent request
  // takes the transaction (it marks its key committed inside it).
  if (domainData.length === 0 && !scope.idempotency) {
    const created = await createInOneStatement(scope, input);
    if (created) return created;
  }
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const id = newId('organization');
    const [inserted] = await tx
      .insert(organizations)
      .values({
        id,
        environmentId: scope.env.id,
        name: input.name,
        externalId: input.external_id ?? null,
        metadata: input.metadata ?? {},
        allowProfilesOutsideOrganization: input.allow_profiles_outside_organization ?? false,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    // Without domain data the inserted row is the whole organization: no read-back round trip.
    let created: Organization | undefined;
    if (domainData.length === 0 && inserted) created = toOrganization({ ...inserted, domains: [] });
    else {
      await applyDomainData(tx, scope, id, domainData);
      created = await findOrganization(tx, scope, eq(organizations.id, id));
    }
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
