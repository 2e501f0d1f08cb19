import {
  claimRoundRobin,
  coalesced,
  type Db,
  environmentsWith,
  events,
  type FairTake,
  type PageParams,
  paginate,
  rawRows,
  renderedOnce,
} from '@atrium/db';
import { and, eq, getTableColumns, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import { purgeOlderThan } from '../common/store.ts';
import { markCommittedEntries, markCommittedEntry } from '../idempotency/store.ts';
import type { Scope } from '../kernel/scope.ts';

export type EventRow = typeof events.$inferSelect;
export type NewEvent = typeof events.$inferInsert;

/** Which events a list returns, besides the environment's. */
export interface EventFilter {
  /** The oldest creation time listed (the retention period's start). */
  since: Date;
  names?: string[] | undefined;
  organizationId?: string | undefined;
  rangeStart?: Date | undefined;
  rangeEnd?: Date | undefined;
}

/** Appends one event row in the caller's transaction. */
export async function insertEvent(db: Db, row: NewEvent): Promise<void> {
  await db.insert(events).values(row);
}

/** Rows per statement of `insertEvents` (one JSON parameter), so that no one statement grows without bound. */
const EVENTS_PER_INSERT = 2_000;

/**
 * Appends many event rows, a statement per 2,000, in the caller's transaction. The rows go as one
 * JSON array and the statement is rendered once: it ends most writes (`withEventsBatched`), where
 * Drizzle's builder rendered nine parameters a row each time.
 */
export async function insertEvents(db: Db, rows: NewEvent[]): Promise<void> {
  for (let i = 0; i < rows.length; i += EVENTS_PER_INSERT) {
    const chunk = rows.slice(i, i + EVENTS_PER_INSERT).map((row) => ({
      id: row.id,
      environment_id: row.environmentId,
      event: row.event,
      organization_id: row.organizationId ?? null,
      data: row.data,
      created_at: row.createdAt ?? new Date(),
      fanout_pending: row.fanoutPending ?? false,
      actor: row.actor ?? null,
      reason: row.reason ?? null,
    }));
    await insertEventsStatement(db, { rows: JSON.stringify(chunk) });
  }
}

const insertEventsStatement = renderedOnce(
  ['rows'] as const,
  (
    v,
  ) => sql`insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending, actor, reason)
    select e.id, e.environment_id, e.event, e.organization_id, e.data, e.created_at, e.fanout_pending, e.actor, e.reason
    from jsonb_to_recordset(${v.rows}::jsonb) as e(id text, environment_id text, event text, organization_id text,
      data jsonb, created_at timestamptz, fanout_pending boolean, actor text, reason text)`,
);

/**
 * The events about one domain (its `organization_domain.*` events, whose data is the domain or,
 * for `verification_failed`, holds it), newest first: the console's verification history.
 */
export function eventsOfDomain(db: Db, environmentId: string, organizationId: string, domainId: string) {
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.environmentId, environmentId),
        eq(events.organizationId, organizationId),
        sql`${events.event} like 'organization_domain.%'`,
        sql`(${events.data}->>'id' = ${domainId} or ${events.data}->'organization_domain'->>'id' = ${domainId})`,
      ),
    )
    .orderBy(sql`${events.id} desc`)
    .limit(100);
}

/** One page of the environment's events matching `filter`, by id. */
export function pageOfEvents(db: Db, environmentId: string, filter: EventFilter, params: PageParams) {
  const where = and(
    eq(events.environmentId, environmentId),
    gte(events.createdAt, filter.since),
    filter.names && filter.names.length > 0 ? inArray(events.event, filter.names) : undefined,
    filter.organizationId ? eq(events.organizationId, filter.organizationId) : undefined,
    filter.rangeStart ? gte(events.createdAt, filter.rangeStart) : undefined,
    filter.rangeEnd ? lte(events.createdAt, filter.rangeEnd) : undefined,
  );
  return paginate(
    params,
    events.id,
    (q) => db.select().from(events).where(and(where, q.keyset)).orderBy(q.orderBy).limit(q.limit),
    (row) => row.id,
  );
}

/**
 * Deletes up to `batchSize` of the oldest events created before `cutoff` (their deliveries go
 * by cascade); returns how many it deleted.
 */
export function deleteEventsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeOlderThan(db, events, events.createdAt, cutoff, batchSize);
}

/** The names of the event's values in `writeWithEvent`'s statement. */
const EVENT_VALUES = [
  'eventEnvironment',
  'eventId',
  'eventName',
  'eventOrganization',
  'eventData',
  'eventAt',
  'eventActor',
] as const;
type EventValue = (typeof EVENT_VALUES)[number];
type EventValues = Record<EventValue, unknown>;
/** The Idempotency-Key claim's values, filled when the scope carries one. */
const CLAIM_VALUES = ['claimEnvironment', 'claimKey'] as const;

/** The event's values for `writeWithEvent`'s statement, by the names of EVENT_VALUES. */
function eventValues(
  scope: Scope,
  eventId: string,
  event: string,
  data: Record<string, unknown>,
  organizationId: string | null,
  now: Date,
): EventValues {
  return {
    eventEnvironment: scope.env.id,
    eventId,
    eventName: event,
    eventOrganization: organizationId,
    eventData: JSON.stringify(data),
    eventAt: now.toISOString(),
    eventActor: scope.actor ?? null,
  };
}

/**
 * A change and its event in one autocommit statement, rendered once (bench/README.md, "Second
 * pass"). `change(values)` is a data-modifying statement with RETURNING, one event per row it
 * returns; the writer resolves false when it wrote nothing, and the caller explains the refusal
 * (404, 409 or 422). `before` adds WITH entries (`name as (…)`) `change` may read. With an
 * Idempotency-Key claim in the scope, the statement also marks the key `committed` if it wrote.
 *
 * With `many`, concurrent writes go together (group commit, `coalesced`, as `writeManyWithEvents`
 * says); without it each write is its own statement.
 */
export function writeWithEvent<K extends string>(
  names: readonly K[],
  change: (values: Record<K, unknown>) => SQL,
  before?: ((values: Record<K | EventValue, unknown>) => SQL) | undefined,
  many?: (columns: Record<K, SQL>) => SQL,
) {
  const build = (v: Record<K | EventValue, unknown>, mark: SQL) =>
    sql`with ${before ? sql`${before(v)},` : sql``} changed as (${change(v)}),
    recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending, actor)
      select ${v.eventId}, ${v.eventEnvironment}, ${v.eventName}, ${v.eventOrganization}, ${v.eventData}::jsonb, ${v.eventAt}::timestamptz, true, ${v.eventActor}::text
      from changed
      returning id
    )${mark}
    select count(*)::int as written from changed`;
  const plain = renderedOnce([...names, ...EVENT_VALUES], (v) => build(v, sql``));
  const marking = renderedOnce([...names, ...EVENT_VALUES, ...CLAIM_VALUES], (v) =>
    build(v, sql`, ${markCommittedEntry(v.claimEnvironment, v.claimKey)}`),
  );
  /** One write alone: its statement, with the claim's mark when it carries one. */
  const one = async (db: Db, all: Record<string, unknown>): Promise<boolean> => {
    const rows =
      all.claimKey === undefined
        ? await plain<{ written: number }>(db, all)
        : await marking<{ written: number }>(db, all);
    return Number(rows[0]?.written ?? 0) > 0;
  };
  const write = many ? writeManyWithEvents(names, one, many) : one;
  return (
    scope: Scope,
    values: Record<K, unknown>,
    event: { id: string; name: string; data: Record<string, unknown>; organizationId: string | null; now: Date },
  ): Promise<boolean> => {
    // Object.assign, not `{ ...values, ...eventValues() }`: on Node 20 a literal of two spreads
    // left each write's objects to be promoted by V8's scavenges (bench/README.md, tenth pass).
    const all = Object.assign(
      {},
      values,
      eventValues(scope, event.id, event.name, event.data, event.organizationId, event.now),
    );
    const claim = scope.idempotency;
    if (claim) Object.assign(all, { claimEnvironment: claim.environmentId, claimKey: claim.key });
    return write(scope.db, all);
  };
}

/** Writes per statement of a group commit (`coalesced`'s `max`). */
const WRITES_PER_STATEMENT = 100;

/**
 * Group commit for `writeWithEvent` (issue #35): a write arriving while none of its kind is in
 * flight is its own statement (`one`); those arriving meanwhile go as one statement, whose `input`
 * holds a row per write (every value a text column named as the value, `columns` refers to them):
 * `many(columns)` changes from `input` and returns the `id` of each row it wrote, which must be
 * its write's `id` value. Each written row gets its own event and, with a claim, its key marked
 * committed; each caller learns whether its own row was written. A batch that fails (a duplicate
 * external id, a value the database refuses) is retried write by write, so each caller sees its
 * own outcome.
 */
function writeManyWithEvents<K extends string>(
  names: readonly K[],
  one: (db: Db, all: Record<string, unknown>) => Promise<boolean>,
  many: (columns: Record<K, SQL>) => SQL,
) {
  const all = [...names, ...EVENT_VALUES, ...CLAIM_VALUES];
  const column = (name: string) => sql.raw(`input."${name}"`);
  const columns = Object.fromEntries(names.map((name) => [name, column(name)])) as Record<K, SQL>;
  const e = Object.fromEntries(EVENT_VALUES.map((name) => [name, column(name)])) as Record<EventValue, SQL>;
  const statement = renderedOnce(
    ['rows'] as const,
    (v) => sql`with input as (
      select * from jsonb_to_recordset(${v.rows}::jsonb) as input(${sql.raw(all.map((name) => `"${name}" text`).join(', '))})
    ), changed as (${many(columns)}),
    recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending, actor)
      select ${e.eventId}, ${e.eventEnvironment}, ${e.eventName}, ${e.eventOrganization}, ${e.eventData}::jsonb, ${e.eventAt}::timestamptz, true, ${e.eventActor}
      from input join changed on changed.id = input.id
      returning id
    ), ${markCommittedEntries(
      sql`select input."claimEnvironment", input."claimKey" from input join changed on changed.id = input.id where input."claimKey" is not null`,
    )}
    select id from changed`,
  );
  return coalesced<Record<string, unknown>, boolean>({
    one,
    async many(db, writes) {
      const rows = await statement<{ id: string }>(db, { rows: JSON.stringify(writes) });
      const written = new Set(rows.map((row) => row.id));
      return writes.map((w) => written.has(String(w.id)));
    },
    max: WRITES_PER_STATEMENT,
  });
}

// What other resources' statements read and write of the events (issue #35: a table belongs to one store)

/**
 * An INSERT of events from `rows`, a select of (id, environment_id, event, organization_id, data,
 * created_at, fanout_pending, actor), returning their ids: a WITH entry of another store's
 * statement that records events with its change (create organization's claims).
 */
export const eventsInserted = (rows: SQL) =>
  sql`insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending, actor)
      ${rows}
      returning id`;

/** An event the webhooks' fan-out took (`claimPendingEvents`). */
export interface PendingEvent {
  id: string;
  environmentId: string;
  event: string;
  createdAt: string | Date;
}

/** Up to `limit` events marked `fanout_pending`, round-robin by environment, FOR UPDATE SKIP LOCKED, in the caller's transaction. */
export function claimPendingEvents(tx: Db, limit: number, fair: FairTake) {
  const e = events;
  const pending = and(
    // The bare column: the generic plan then uses events_fanout_pending_idx (partial on it).
    sql`${e.fanoutPending}`,
    fair.environments ? inArray(e.environmentId, fair.environments) : undefined,
  ) as SQL;
  const claim = (after: string, upto: string, n: number) =>
    rawRows<PendingEvent>(
      tx,
      sql`with recursive ${environmentsWith(e, e.environmentId, pending, after, upto)}
      select taken.* from envs cross join lateral (
        select ${e.id} as id, ${e.environmentId} as "environmentId", ${e.event} as event, ${e.createdAt} as "createdAt"
        from ${e}
        where ${pending} and ${e.environmentId} = envs.environment_id
        order by ${e.id} limit ${fair.perEnvironment}
        for update skip locked
      ) as taken
      limit ${n}`,
    );
  return claimRoundRobin(fair.cursor ?? '', limit, claim);
}

/** Clears the fan-out mark of these events (their deliveries are queued), in the caller's transaction. */
export async function clearFanoutPending(tx: Db, ids: string[]): Promise<void> {
  await tx.update(events).set({ fanoutPending: false }).where(inArray(events.id, ids));
}

/**
 * The events as a derived table aliased `ev`, and its fields decoded as the table's
 * (`eventFields`), for another store's select that joins each of its rows' event on `ev.id`
 * (the webhook deliveries' reads): PostgreSQL pulls the subquery up, the plan is the table's.
 */
export const eventsAsEv = sql`(select * from ${events}) ev`;
export const eventFields = Object.fromEntries(
  Object.entries(getTableColumns(events)).map(([key, column]) => [
    key,
    sql`ev.${sql.identifier(column.name)}`.mapWith(column),
  ]),
) as { [K in keyof EventRow]: SQL<EventRow[K]> };
