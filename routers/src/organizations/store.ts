import {
  type Db,
  type KeysetOp,
  keysetCondition,
  organizations,
  type PageParams,
  paginate,
  perHandle,
  perHandleAndKey,
  renderedOnce,
} from '@atrium/db';
import { and, asc, desc, eq, gte, lte, type SQL, sql } from 'drizzle-orm';
import { loadScoped, qualified as q, type RowLock, scopedId } from '../common/store.ts';
import { eventsInserted, writeWithEvent } from '../events/store.ts';
import type { Scope } from '../kernel/scope.ts';
import {
  claimantsOf,
  type DomainCounter,
  type DomainRecord,
  type DomainTuple,
  domainsOf,
  fromDomainTuple,
  newOrganizationClaims,
} from '../organization-domains/store.ts';

type OrganizationRow = typeof organizations.$inferSelect;

/**
 * An organization with its domains as the stores give it: a row, or one the reads decode from
 * `organizationTuple` (timestamps then in PostgreSQL's JSON encoding).
 */
export type OrganizationRecord = Omit<
  OrganizationRow,
  'environmentId' | 'domainCount' | 'auditLogsRetentionDays' | 'createdAt' | 'updatedAt'
> & {
  createdAt: Date | string;
  updatedAt: Date | string;
  domains: DomainRecord[];
};

/** `organizationTuple` as JSON gives it: positional, in the order `fromTuple` reads. */
type OrganizationTuple = [
  id: string,
  name: string,
  metadata: OrganizationRow['metadata'],
  externalId: string | null,
  billingCustomerId: string | null,
  allowProfilesOutsideOrganization: boolean,
  createdAt: string,
  updatedAt: string,
  domains: DomainTuple[],
];

/**
 * An organization with its domains as one JSON array built by PostgreSQL: one JSON value per
 * organization instead of Drizzle's per-field row mapping and a Date per timestamp, and
 * positional, so PostgreSQL writes no field names (bench/README.md, "Issue #20's leftovers").
 */
const organizationTuple = sql<OrganizationTuple>`json_build_array(${q(organizations.id)}, ${q(organizations.name)}, ${q(organizations.metadata)}, ${q(organizations.externalId)}, ${q(organizations.billingCustomerId)}, ${q(organizations.allowProfilesOutsideOrganization)}, ${q(organizations.createdAt)}, ${q(organizations.updatedAt)}, ${domainsOf(q(organizations.id))})`;

/** The record of an `organizationTuple`: every read of an organization comes through here. */
const fromTuple = (t: OrganizationTuple): OrganizationRecord => ({
  id: t[0],
  name: t[1],
  metadata: t[2],
  externalId: t[3],
  billingCustomerId: t[4],
  allowProfilesOutsideOrganization: t[5],
  createdAt: t[6],
  updatedAt: t[7],
  domains: t[8].map(fromDomainTuple),
});

/**
 * The hot reads as prepared statements, built once per database handle (`perHandle`): Drizzle's
 * query builder costs more CPU per request than the query itself.
 */
const organizationById = perHandle((db: Db) =>
  db
    .select({ o: organizationTuple })
    .from(organizations)
    .where(and(eq(organizations.environmentId, sql.placeholder('env')), eq(organizations.id, sql.placeholder('id'))))
    .prepare('organizations_get'),
);

/**
 * An organization's own fields without its domains or metadata, as the client surfaces show it
 * (GraphQL `organization`): timestamps in PostgreSQL's JSON encoding.
 */
export interface OrganizationSummary {
  id: string;
  name: string;
  allowProfilesOutsideOrganization: boolean;
  createdAt: string;
  updatedAt: string;
}

type SummaryTuple = [id: string, name: string, allowProfiles: boolean, createdAt: string, updatedAt: string];

/** The summary's five fields as one JSON array (timestamps in PostgreSQL's JSON encoding). */
const summaryTuple = sql`json_build_array(${q(organizations.id)}, ${q(organizations.name)}, ${q(organizations.allowProfilesOutsideOrganization)}, ${q(organizations.createdAt)}, ${q(organizations.updatedAt)})`;

/**
 * The organization's summary by id: the row's five fields, without `organizations_get`'s domains
 * subquery and metadata, which a client read shows none of (bench/README.md, "Floors (issue #35)").
 * It runs on every GraphQL `organization` read: its text is rendered once (`renderedOnce`) and sent
 * prepared, without Drizzle's prepared-query wrapper and tracing span on each use.
 */
const organizationSummaryById = renderedOnce(
  ['env', 'id'] as const,
  (v) => sql`select ${summaryTuple} as o
    from ${organizations} where ${organizations.environmentId} = ${v.env} and ${organizations.id} = ${v.id}`,
);

/** The summary of the organization with this id in the environment (`OrganizationSummary`). */
export async function getSummaryById(
  db: Db,
  environmentId: string,
  id: string,
): Promise<OrganizationSummary | undefined> {
  const [row] = await organizationSummaryById<{ o: SummaryTuple | string }>(db, { env: environmentId, id });
  if (!row) return undefined;
  // A driver may hand `json` over as its text (PGlite's raw query does not parse it everywhere).
  const o = typeof row.o === 'string' ? (JSON.parse(row.o) as SummaryTuple) : row.o;
  const [, name, allowProfilesOutsideOrganization, createdAt, updatedAt] = o;
  return { id: o[0], name, allowProfilesOutsideOrganization, createdAt, updatedAt };
}

/** What decides a list page's statement text: direction, cursor comparison, the domains filter. */
type ListShape = `${boolean}:${KeysetOp | 'first'}:${boolean}`;

/** The list pages, one statement per handle and shape. */
const organizationsPage = perHandleAndKey((db: Db, shape: ListShape) => {
  const [up, op, withDomains] = shape.split(':') as [string, KeysetOp | 'first', string];
  const ascending = up === 'true';
  const filtered = withDomains === 'true';
  const env = sql.placeholder('env');
  // The domains filter: the organizations holding any of the domains, found from the domain index
  // as an array computed once (an initplan), so that every plan reads them by key.
  const ownsDomain = sql`${organizations.id} = any(array(
    ${claimantsOf(env, (domain) => sql`${domain} = any(${sql.placeholder('domains')}::text[])`)}))`;
  return (
    db
      .select({ o: organizationTuple })
      .from(organizations)
      .where(
        and(
          // A range rather than `=`, so the plan keeps environment_id in its order and walks
          // organizations_environment_id_idx (environment_id, id) without a sort. Filtered, the
          // ids come from the environment's domains: the environment is checked on each row
          // (an expression no index serves), so no plan reads the environment's index entries.
          ...(filtered
            ? [ownsDomain, sql`(${organizations.environmentId} || '') = ${env}`]
            : [gte(organizations.environmentId, env), lte(organizations.environmentId, env)]),
          op === 'first' ? undefined : keysetCondition(organizations.id, op, sql.placeholder('cursor')),
        ),
      )
      // The same order as by id alone within one environment.
      .orderBy(
        ...(ascending
          ? [asc(organizations.environmentId), asc(organizations.id)]
          : [desc(organizations.environmentId), desc(organizations.id)]),
      )
      .limit(sql.placeholder('limit'))
      .prepare(`organizations_list_${ascending ? 'asc' : 'desc'}_${op}${filtered ? '_domains' : ''}`)
  );
});

/** The organization with this id in the environment, with its domains. */
export async function getById(db: Db, environmentId: string, id: string): Promise<OrganizationRecord | undefined> {
  const [row] = await organizationById(db).execute({ env: environmentId, id });
  return row && fromTuple(row.o);
}

/** A page of the environment's organizations by id, optionally only those holding `domains`. */
export const listPage = (db: Db, params: PageParams, environmentId: string, domains: string[] | undefined) =>
  paginate(
    params,
    organizations.id,
    async (q) => {
      const { ascending, cursor } = q.shape;
      const shape: ListShape = `${ascending}:${cursor?.op ?? 'first'}:${domains !== undefined}`;
      const rows = await organizationsPage(db, shape).execute({
        env: environmentId,
        cursor: cursor?.value,
        limit: q.limit,
        domains,
      });
      return rows.map((row) => fromTuple(row.o));
    },
    (organization) => organization.id,
  );

/** One organization of the environment matching `where`, with its domains (one round trip). */
async function findOne(db: Db, environmentId: string, where: SQL): Promise<OrganizationRecord | undefined> {
  const [row] = await db
    .select({ o: organizationTuple })
    .from(organizations)
    .where(and(eq(organizations.environmentId, environmentId), where))
    .limit(1);
  return row && fromTuple(row.o);
}

export const findByExternalId = (db: Db, environmentId: string, externalId: string) =>
  findOne(db, environmentId, eq(organizations.externalId, externalId));

/**
 * The operator console's search: organizations whose name contains `text` (any case), whose
 * external id or id is `text`, or that claim the domain `text`; newest first, at most `limit`.
 * A substring of a name scans the environment's organizations: an operator's lookup, not an API.
 */
export async function searchOrganizations(db: Db, environmentId: string, text: string, limit: number) {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db
    .select({ o: organizationTuple })
    .from(organizations)
    .where(
      and(
        eq(organizations.environmentId, environmentId),
        sql`(${organizations.name} ilike ${pattern} or ${organizations.externalId} = ${text} or ${organizations.id} = ${text}
          or ${organizations.id} in (${claimantsOf(environmentId, (domain) => sql`${domain} = lower(${text})`)}))`,
      ),
    )
    .orderBy(desc(organizations.id))
    .limit(limit);
  return rows.map((row) => fromTuple(row.o));
}

/** Reads in the caller's transaction (a transaction is a handle without prepared statements). */
export const findById = (db: Db, environmentId: string, id: string) =>
  findOne(db, environmentId, eq(organizations.id, id));

/** The organization's row, or the contract's 404; `lock` locks it in the caller's transaction. */
export const loadOrganization = (db: Db, environmentId: string, id: string, lock?: RowLock) =>
  loadScoped(db, organizations, 'organization', environmentId, id, lock);

export async function updateRow(
  db: Db,
  id: string,
  changes: Partial<typeof organizations.$inferInsert>,
): Promise<void> {
  await db.update(organizations).set(changes).where(eq(organizations.id, id));
}

/** Deletes the organization; its domains and everything it owns go with it (foreign keys). */
export async function deleteRow(db: Db, environmentId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(organizations)
    .where(scopedId(organizations, environmentId, id))
    .returning({ id: organizations.id });
  return deleted.length > 0;
}

/** A claim of a new organization, as `createWithEvent` takes it (`claims`, JSON). */
export interface NewClaim {
  id: string;
  domain: string;
  state: 'pending' | 'verified';
  strategy: 'dns' | 'manual';
  prefix: string;
  token: string;
}

/** An event of a new organization's claims (`events`, JSON); `claim` names a claim it fails. */
export interface ClaimEvent {
  id: string;
  event: string;
  organization: string;
  data: Record<string, unknown>;
  claim: string | null;
}

/** The organization's own values in the create statements. */
const ORGANIZATION_VALUES = [
  'id',
  'environmentId',
  'name',
  'externalId',
  'metadata',
  'allowProfilesOutsideOrganization',
  'at',
] as const;

/**
 * The create statement without domain data: the organization and `organization.created`.
 * Concurrent creates go as one statement (group commit, events/store.ts `writeManyWithEvents`).
 */
const createAlone = writeWithEvent(
  ORGANIZATION_VALUES,
  (
    v,
  ) => sql`insert into ${organizations} (id, environment_id, name, external_id, metadata, billing_customer_id, allow_profiles_outside_organization, domain_count, created_at, updated_at)
      values (${v.id}, ${v.environmentId}, ${v.name}, ${v.externalId}, ${v.metadata}::jsonb, null, ${v.allowProfilesOutsideOrganization}, 0, ${v.at}::timestamptz, ${v.at}::timestamptz)
      returning id`,
  undefined,
  (
    c,
  ) => sql`insert into ${organizations} (id, environment_id, name, external_id, metadata, billing_customer_id, allow_profiles_outside_organization, domain_count, created_at, updated_at)
      select ${c.id}, ${c.environmentId}, ${c.name}, ${c.externalId}, ${c.metadata}::jsonb, null, ${c.allowProfilesOutsideOrganization}::boolean, 0, ${c.at}::timestamptz, ${c.at}::timestamptz
      from input
      returning id`,
);

/** The create statement with domain data: see `createWithEvent`. */
const createClaiming = writeWithEvent(
  [...ORGANIZATION_VALUES, 'limit', 'claims', 'events'],
  () => sql`select id from created`,
  (v) => sql`claims as (
      select * from jsonb_to_recordset(${v.claims}::jsonb) as c(id text, domain text, state text, strategy text, prefix text, token text)
    ),
    claim_events as (
      select * from jsonb_to_recordset(${v.events}::jsonb) as e(id text, event text, organization text, data jsonb, claim text)
    ),
    obstacles as (${newOrganizationClaims.obstacles(v.environmentId)}),
    created as (
      insert into ${organizations} (id, environment_id, name, external_id, metadata, billing_customer_id, allow_profiles_outside_organization, domain_count, created_at, updated_at)
      select ${v.id}, ${v.environmentId}, ${v.name}, ${v.externalId}, ${v.metadata}::jsonb, null, ${v.allowProfilesOutsideOrganization}, (select count(*) from claims), ${v.at}::timestamptz, ${v.at}::timestamptz
      where (select count(*) from claims) <= ${v.limit}::int and not exists (select 1 from obstacles)
      returning id
    ),
    claimed as (${newOrganizationClaims.inserted(v.environmentId, v.at)}),
    failed as (${newOrganizationClaims.failed(v.at)}),
    claims_recorded as (${eventsInserted(
      sql`select e.id, ${v.environmentId}, e.event, e.organization, e.data, ${v.at}::timestamptz, true, ${v.eventActor}::text
      from created, claim_events as e
      where e.claim is null or e.claim in (select id from failed)`,
    )})`,
);

/** A new organization's values for `createWithEvent`; `metadata` is JSON. */
export interface NewOrganization {
  id: string;
  environmentId: string;
  name: string;
  externalId: string | null;
  metadata: string;
  allowProfilesOutsideOrganization: boolean;
  at: string;
  /** The domains-per-organization quota the claims must fit. */
  limit: number;
  claims: NewClaim[];
  events: ClaimEvent[];
}

/**
 * Create organization as one autocommit statement (see `writeWithEvent`): the organization,
 * its domain claims (`claims`), the claims' events, the other organizations' pending claims on
 * its verified domains turned `failed` (exactly those named by the events' `claim`), and
 * `organization.created`. It writes nothing when a domain is verified in the environment, when
 * there are more claims than `limit`, or when a pending claim on a verified domain is not among
 * those named (one made meanwhile); `verifiedAmong` then tells the caller why. Without claims
 * the statement is the same write without the claims' parts, which would find nothing to do.
 */
export function createWithEvent(
  scope: Scope,
  values: NewOrganization,
  event: Parameters<typeof createAlone>[2],
): Promise<boolean> {
  if (values.claims.length === 0) return createAlone(scope, values, event);
  const encoded = { claims: JSON.stringify(values.claims), events: JSON.stringify(values.events) };
  return createClaiming(scope, Object.assign({}, values, encoded), event);
}

// What other resources ask of an organization's row (issue #35: a table belongs to one store) ----

/** Whether the organization is still in the environment (a user-less widget token's check on every use). */
const organizationExistsRead = perHandle((db: Db) =>
  db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, sql.placeholder('org')), eq(organizations.environmentId, sql.placeholder('env'))))
    .limit(1)
    .prepare('widget_organization_exists'),
);

export async function organizationExists(db: Db, environmentId: string, organizationId: string): Promise<boolean> {
  const rows = await organizationExistsRead(db).execute({ env: environmentId, org: organizationId });
  return rows.length > 0;
}

/** A condition of another store's statement: the organization `org` is in the environment `env`. */
export const organizationIn = (env: unknown, org: unknown): SQL =>
  sql`exists (select 1 from ${organizations} o where o.environment_id = ${env} and o.id = ${org})`;

/**
 * The organizations' ids and names as a derived table, for a statement of another store that
 * shows its rows' organization name (`join ${organizationNames} o on o.id = …`): PostgreSQL pulls
 * the subquery up, so the plan is the join of the table itself.
 */
export const organizationNames = sql`(select id, environment_id, name from ${organizations})`;

/**
 * The organizations' audit log retention (`days`) as a derived table, for the audit log
 * statements that check an event's age against it (`join ${organizationRetentions} o on …`).
 */
export const organizationRetentions = sql`(select id, environment_id, audit_logs_retention_days as days from ${organizations})`;

/** The organization's audit log retention in days, or undefined when the environment has no such organization. */
export async function auditLogsRetentionOf(db: Db, environmentId: string, organizationId: string) {
  const [row] = await db
    .select({ days: organizations.auditLogsRetentionDays })
    .from(organizations)
    .where(and(eq(organizations.environmentId, environmentId), eq(organizations.id, organizationId)))
    .limit(1);
  return row?.days;
}

/** Sets the organization's audit log retention; the row's id and new retention, undefined when it is not there. */
export async function setAuditLogsRetention(
  db: Db,
  environmentId: string,
  organizationId: string,
  days: number,
  now: Date,
) {
  const [row] = await db
    .update(organizations)
    .set({ auditLogsRetentionDays: days, updatedAt: now })
    .where(and(eq(organizations.environmentId, environmentId), eq(organizations.id, organizationId)))
    .returning({ id: organizations.id, auditLogsRetentionDays: organizations.auditLogsRetentionDays });
  return row;
}

/**
 * The organization's domain count (`domain_count`), kept by every write of its domains
 * (organization-domains/counter.ts, registered in app-router.ts). The quota check is a condition
 * of the UPDATE that bumps it, re-checked on the newest row after a concurrent writer commits.
 */
export const domainCounter: DomainCounter = {
  counting: (
    environmentId,
    organizationId,
    limit,
    also,
  ) => sql`update ${organizations} as o set domain_count = o.domain_count + 1
      where o.environment_id = ${environmentId} and o.id = ${organizationId} and o.domain_count < ${limit}::int
        and ${also(sql`o.id`)}
      returning o.id, o.environment_id`,
  countOf: (environmentId, organizationId) =>
    sql`(select domain_count from ${organizations} where environment_id = ${environmentId} and id = ${organizationId})`,
  async count(db, organizationId, limit) {
    const counted = await db
      .update(organizations)
      .set({ domainCount: sql`${organizations.domainCount} + 1` })
      .where(and(eq(organizations.id, organizationId), sql`${organizations.domainCount} < ${limit}`))
      .returning({ id: organizations.id });
    return counted.length > 0;
  },
  async uncount(db, organizationId) {
    await db
      .update(organizations)
      .set({ domainCount: sql`${organizations.domainCount} - 1` })
      .where(eq(organizations.id, organizationId));
  },
};
