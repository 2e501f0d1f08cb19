import {
  auditLogActions,
  auditLogEvents,
  auditLogSchemas,
  coalesced,
  countUpTo,
  type Db,
  lockEnvironment,
  type PageParams,
  paginate,
  renderedOnce,
} from '@atrium/db';
import { and, eq, gte, lt, lte, sql } from 'drizzle-orm';
import { markCommittedEntries, markCommittedEntry } from '../idempotency/store.ts';
import { organizationRetentions } from '../organizations/store.ts';

export type AuditLogEventRow = typeof auditLogEvents.$inferSelect;
export type AuditLogActionRow = typeof auditLogActions.$inferSelect;
export type AuditLogSchemaRow = typeof auditLogSchemas.$inferSelect;

/** The parts of a schema an event is checked against. */
export type SchemaRules = Pick<AuditLogSchemaRow, 'actor' | 'targets' | 'metadata'>;

/** What a create needs to know before its INSERT, in one read: the organization's retention and the schema. */
export interface EventPrecheck {
  retentionDays: number;
  /** The action's newest version, or null when the action has no schema. */
  latestVersion: number | null;
  /** The schema of the asked version, when the action has it. */
  schema: SchemaRules | null;
}

const PRECHECK_VALUES = ['env', 'org', 'action', 'version'] as const;
/** Rendered once (building it through Drizzle per request cost more than running it). */
const precheck = renderedOnce(
  PRECHECK_VALUES,
  (v) => sql`select o.days as retention_days, a.latest_version, s.version as schema_version,
      s.actor as schema_actor, s.targets as schema_targets, s.metadata as schema_metadata
    from ${organizationRetentions} o
    left join ${auditLogActions} a on a.environment_id = o.environment_id and a.name = ${v.action}::text
    left join ${auditLogSchemas} s on s.action_id = a.id and s.version = ${v.version}::int
    where o.environment_id = ${v.env}::text and o.id = ${v.org}::text
    limit 1`,
);

interface PrecheckRow {
  retention_days: number;
  latest_version: number | null;
  schema_version: number | null;
  schema_actor: SchemaRules['actor'];
  schema_targets: SchemaRules['targets'] | null;
  schema_metadata: SchemaRules['metadata'];
}

/**
 * One read: the organization (in the environment) with its retention, the action's newest
 * version and the schema of `version`; undefined when the environment has no such organization.
 */
export async function eventPrecheck(
  db: Db,
  environmentId: string,
  organizationId: string,
  action: string,
  version: number,
): Promise<EventPrecheck | undefined> {
  const [row] = await precheck<PrecheckRow>(db, { env: environmentId, org: organizationId, action, version });
  if (!row) return undefined;
  return {
    retentionDays: Number(row.retention_days),
    latestVersion: row.latest_version === null ? null : Number(row.latest_version),
    schema:
      row.schema_version === null
        ? null
        : { actor: row.schema_actor, targets: row.schema_targets ?? [], metadata: row.schema_metadata },
  };
}

const INSERT_VALUES = [
  'id',
  'env',
  'org',
  'action',
  'occurredAt',
  'actor',
  'targets',
  'context',
  'metadata',
  'version',
  'at',
  'claim',
] as const;
/**
 * An event's values for the INSERT: the JSON columns as JSON text, the instants as ISO strings;
 * `claim` is the request's `Idempotency-Key` (null without one), marked committed by the same
 * statement that writes the event, so a retry after a lost answer never records it twice.
 */
export type NewAuditLogEventValues = Record<(typeof INSERT_VALUES)[number], string | number | null>;

const insertEvent = renderedOnce(
  INSERT_VALUES,
  (v) => sql`with changed as (
      insert into ${auditLogEvents} (id, environment_id, organization_id, action, occurred_at, actor, targets, context, metadata, version, created_at)
      values (${v.id}::text, ${v.env}::text, ${v.org}::text, ${v.action}::text, ${v.occurredAt}::timestamptz, ${v.actor}::jsonb,
        ${v.targets}::jsonb, ${v.context}::jsonb, ${v.metadata}::jsonb, ${v.version}::int, ${v.at}::timestamptz)
      returning 1
    ), ${markCommittedEntry(sql`${v.env}::text`, sql`${v.claim}::text`)}
    select count(*)::int as written from changed`,
);

const PLAIN_VALUES = [...INSERT_VALUES, 'skewMs'] as const;
/**
 * The common case as one statement: the INSERT of an event whose action has no schema, for an
 * organization of the environment, `occurred_at` within its retention and the clock skew. It
 * writes nothing otherwise, and the caller then checks the long way (`eventPrecheck`).
 */
const insertPlainEvent = renderedOnce(
  PLAIN_VALUES,
  (v) => sql`with o as (
      select days from ${organizationRetentions} r
      where environment_id = ${v.env}::text and id = ${v.org}::text
    ), changed as (
      insert into ${auditLogEvents} (id, environment_id, organization_id, action, occurred_at, actor, targets, context, metadata, version, created_at)
      select ${v.id}::text, ${v.env}::text, ${v.org}::text, ${v.action}::text, ${v.occurredAt}::timestamptz, ${v.actor}::jsonb,
        ${v.targets}::jsonb, ${v.context}::jsonb, ${v.metadata}::jsonb, ${v.version}::int, ${v.at}::timestamptz
      from o
      where ${v.occurredAt}::timestamptz >= ${v.at}::timestamptz - make_interval(days => o.days)
        and ${v.occurredAt}::timestamptz <= ${v.at}::timestamptz + make_interval(secs => ${v.skewMs}::int / 1000.0)
        and not exists (
          select 1 from ${auditLogActions} a where a.environment_id = ${v.env}::text and a.name = ${v.action}::text
        )
      returning 1
    ), ${markCommittedEntry(sql`${v.env}::text`, sql`${v.claim}::text`)}
    select count(*)::int as written from changed`,
);

const PLAIN_BATCH_VALUES = [
  'ids',
  'envs',
  'orgs',
  'actions',
  'occurredAts',
  'actors',
  'targets',
  'contexts',
  'metadatas',
  'versions',
  'ats',
  'skewsMs',
  'claims',
] as const;
/**
 * `insertPlainEvent` for many events in one statement: one array per column (the JSON columns as
 * text, each element cast; metadata may be null), each row held to the same conditions; the ids
 * written come back. One text for any number of rows.
 */
const insertPlainEvents = renderedOnce(PLAIN_BATCH_VALUES, (values) => {
  // Rendered once, each value is a placeholder; rendered with its values (a handle without a
  // client of its own), an array must stay one parameter rather than become a list.
  const v = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, Array.isArray(value) ? sql.param(value) : value]),
  ) as typeof values;
  return sql`with e as (
      select * from unnest(${v.ids}::text[], ${v.envs}::text[], ${v.orgs}::text[], ${v.actions}::text[], ${v.occurredAts}::text[],
          ${v.actors}::text[], ${v.targets}::text[], ${v.contexts}::text[], ${v.metadatas}::text[], ${v.versions}::int[],
          ${v.ats}::text[], ${v.skewsMs}::int[], ${v.claims}::text[])
        as e(id, env, org, action, occurred_at, actor, targets, context, metadata, version, at, skew_ms, claim)
    ), changed as (
      insert into ${auditLogEvents} (id, environment_id, organization_id, action, occurred_at, actor, targets, context, metadata, version, created_at)
      select e.id, e.env, e.org, e.action, e.occurred_at::timestamptz, e.actor::jsonb, e.targets::jsonb, e.context::jsonb,
        e.metadata::jsonb, e.version, e.at::timestamptz
      from e
      join ${organizationRetentions} o on o.environment_id = e.env and o.id = e.org
      where e.occurred_at::timestamptz >= e.at::timestamptz - make_interval(days => o.days)
        and e.occurred_at::timestamptz <= e.at::timestamptz + make_interval(secs => e.skew_ms / 1000.0)
        and not exists (
          select 1 from ${auditLogActions} a where a.environment_id = e.env and a.name = e.action
        )
      returning id
    ), ${markCommittedEntries(sql`select e.env, e.claim from e join changed c on c.id = e.id where e.claim is not null`)}
    select id from changed`;
});

/** A plain event as the coalesced insert carries it: its values and the clock skew it is held to. */
interface PlainEvent {
  values: NewAuditLogEventValues;
  skewMs: number;
}

/**
 * Concurrent plain inserts go together (group commit, `coalesced`): an event alone is one
 * `insertPlainEvent`; events arriving while one is in flight go as one `insertPlainEvents`, and
 * each learns whether its own row was written. A batch that fails is retried event by event.
 */
const insertPlainCoalesced = coalesced<PlainEvent, boolean>({
  async one(db, { values, skewMs }) {
    const rows = await insertPlainEvent<{ written: number }>(db, Object.assign({ skewMs }, values));
    return Number(rows[0]?.written ?? 0) > 0;
  },
  async many(db, events) {
    const column = (name: keyof NewAuditLogEventValues) => events.map((e) => e.values[name]);
    const rows = await insertPlainEvents<{ id: string }>(db, {
      ids: column('id'),
      envs: column('env'),
      orgs: column('org'),
      actions: column('action'),
      occurredAts: column('occurredAt'),
      actors: column('actor'),
      targets: column('targets'),
      contexts: column('context'),
      metadatas: column('metadata'),
      versions: column('version'),
      ats: column('at'),
      skewsMs: events.map((e) => e.skewMs),
      claims: column('claim'),
    });
    const written = new Set(rows.map((row) => row.id));
    return events.map((e) => written.has(String(e.values.id)));
  },
  max: 100,
});

/**
 * True when the event was written by the plain statement (see `insertPlainEvent`), possibly in
 * one statement with other events sent meanwhile; it resolves once that statement has committed.
 */
export function insertPlainAuditLogEvent(db: Db, values: NewAuditLogEventValues, skewMs: number): Promise<boolean> {
  return insertPlainCoalesced(db, { values, skewMs });
}

/** The long path's write of an event: one INSERT that also marks the request's Idempotency-Key committed (`insertEvent`). */
export async function insertAuditLogEvent(db: Db, values: NewAuditLogEventValues): Promise<void> {
  await insertEvent(db, values);
}

/** What a list of an organization's events may be narrowed by (each given one must match). */
export interface AuditLogEventFilters {
  action?: string;
  actorId?: string;
  actorName?: string;
  /** `occurred_at` at or after / at or before. */
  from?: Date;
  to?: Date;
}

/** One page of an organization's events, newest recorded first by default, narrowed by `filters`. */
export function pageOfAuditLogEvents(
  db: Db,
  environmentId: string,
  organizationId: string,
  filters: AuditLogEventFilters,
  params: PageParams,
) {
  const e = auditLogEvents;
  return paginate(
    params,
    e.id,
    (q) =>
      db
        .select()
        .from(e)
        .where(
          and(
            eq(e.environmentId, environmentId),
            eq(e.organizationId, organizationId),
            filters.action === undefined ? undefined : eq(e.action, filters.action),
            filters.actorId === undefined ? undefined : sql`${e.actor}->>'id' = ${filters.actorId}`,
            filters.actorName === undefined ? undefined : sql`${e.actor}->>'name' = ${filters.actorName}`,
            filters.from === undefined ? undefined : gte(e.occurredAt, filters.from),
            filters.to === undefined ? undefined : lte(e.occurredAt, filters.to),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The action row by name, locked for a schema create (FOR UPDATE), or undefined. */
export async function lockActionByName(tx: Db, environmentId: string, name: string) {
  const [row] = await tx
    .select()
    .from(auditLogActions)
    .where(and(eq(auditLogActions.environmentId, environmentId), eq(auditLogActions.name, name)))
    .limit(1)
    .for('update');
  return row;
}

export async function findActionByName(db: Db, environmentId: string, name: string) {
  const [row] = await db
    .select()
    .from(auditLogActions)
    .where(and(eq(auditLogActions.environmentId, environmentId), eq(auditLogActions.name, name)))
    .limit(1);
  return row;
}

/**
 * A new action of the environment, counted against `limit` under the environment's lock (action
 * creates of one environment are serialised; a schema create of an existing action is not).
 * Undefined when the environment already holds `limit` actions.
 */
export async function insertActionBelow(
  tx: Db,
  environmentId: string,
  values: typeof auditLogActions.$inferInsert,
  limit: number,
): Promise<AuditLogActionRow | undefined> {
  await lockEnvironment(tx, environmentId);
  if ((await countUpTo(tx, auditLogActions, eq(auditLogActions.environmentId, environmentId), limit)) >= limit) {
    return undefined;
  }
  const [row] = await tx.insert(auditLogActions).values(values).returning();
  return row;
}

export async function bumpActionVersion(tx: Db, id: string, version: number, now: Date): Promise<AuditLogActionRow> {
  const [row] = await tx
    .update(auditLogActions)
    .set({ latestVersion: version, updatedAt: now })
    .where(eq(auditLogActions.id, id))
    .returning();
  return row as AuditLogActionRow;
}

export async function insertAuditLogSchema(
  tx: Db,
  values: typeof auditLogSchemas.$inferInsert,
): Promise<AuditLogSchemaRow> {
  const [row] = await tx.insert(auditLogSchemas).values(values).returning();
  return row as AuditLogSchemaRow;
}

/** One page of the environment's actions that have schemas, each with its newest schema. */
export function pageOfAuditLogActions(db: Db, environmentId: string, params: PageParams) {
  return paginate(
    params,
    auditLogActions.id,
    (q) =>
      db
        .select({ action: auditLogActions, schema: auditLogSchemas })
        .from(auditLogActions)
        .innerJoin(
          auditLogSchemas,
          and(
            eq(auditLogSchemas.actionId, auditLogActions.id),
            eq(auditLogSchemas.version, auditLogActions.latestVersion),
          ),
        )
        .where(and(eq(auditLogActions.environmentId, environmentId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.action.id,
  );
}

/** One page of an action's schemas (ids in creation order, so in version order). */
export function pageOfAuditLogSchemas(db: Db, environmentId: string, actionId: string, params: PageParams) {
  return paginate(
    params,
    auditLogSchemas.id,
    (q) =>
      db
        .select()
        .from(auditLogSchemas)
        .where(and(eq(auditLogSchemas.environmentId, environmentId), eq(auditLogSchemas.actionId, actionId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The events a retention ends for a deleted organization: the default retention. */
export const DEFAULT_RETENTION_DAYS = 365;

/**
 * Deletes at most `batchSize` events older than their organization's retention at `now` (the
 * default retention when the organization is gone); how many went. Candidates come from the
 * `occurred_at` index, older than the shortest retention (30 days), then each is held against
 * its organization's own. The one statement anywhere that deletes an audit log event.
 */
export async function purgeExpiredAuditLogEvents(db: Db, now: Date, batchSize: number): Promise<number> {
  const shortest = new Date(now.getTime() - 30 * 86_400_000);
  const expired = db
    .select({ id: auditLogEvents.id })
    .from(auditLogEvents)
    .leftJoin(sql`${organizationRetentions} o`, sql`o.id = ${auditLogEvents.organizationId}`)
    .where(
      and(
        lt(auditLogEvents.occurredAt, shortest),
        sql`${auditLogEvents.occurredAt} < ${now.toISOString()}::timestamptz - make_interval(days => coalesce(o.days, ${DEFAULT_RETENTION_DAYS}))`,
      ),
    )
    .limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx
      .delete(auditLogEvents)
      .where(sql`${auditLogEvents.id} = any(array(${expired}))`)
      .returning({ id: auditLogEvents.id }),
  );
  return deleted.length;
}
