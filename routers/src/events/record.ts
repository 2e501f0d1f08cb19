import { type Db, events, newId, rawRows, renderedOnce, webhookDeliveries, webhookEndpoints } from '@atrium/db';
import { type SQL, sql } from 'drizzle-orm';
import type { Scope } from '../context.ts';

/**
 * How many webhook deliveries an event's own statement queues (their ids are made beforehand);
 * an environment with more enabled endpoints subscribed to the event takes one more statement.
 */
export const DELIVERIES_PER_STATEMENT = 8;

/**
 * The WITH entries that record an event and queue its webhook deliveries, in whatever statement
 * makes the change, so that an event exists exactly when its change committed and a committed
 * event is never lost to its endpoints:
 * - `subscribed`: the environment's enabled endpoints subscribed to the event, KEY SHARE locked
 *   until the transaction ends — an endpoint deleted meanwhile waits (and its deliveries go with
 *   it) instead of failing an unrelated write with a foreign-key violation; KEY SHARE never
 *   blocks another writer, nor an endpoint's update. `numbered` numbers them in id order.
 * - `change` (optional): the caller's own data-modifying entry, placed here so that it may test
 *   `(select count(*) from subscribed)`; the event is then written once per row it returns (so
 *   not at all when it wrote nothing).
 * - `recorded`: the event; `delivered`: one delivery for each of the first
 *   DELIVERIES_PER_STATEMENT endpoints.
 * The caller adds its final SELECT.
 */
/** The values of an event's WITH entries, as `eventValues` makes them (or placeholders for them). */
const EVENT_VALUES = [
  'eventEnvironment',
  'eventId',
  'eventName',
  'eventFilter',
  'eventOrganization',
  'eventData',
  'eventAt',
  'deliveryIds',
] as const;
type EventValues = Record<(typeof EVENT_VALUES)[number], unknown>;

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
    eventFilter: JSON.stringify([event]),
    eventOrganization: organizationId,
    eventData: JSON.stringify(data),
    eventAt: now.toISOString(),
    deliveryIds: Array.from({ length: DELIVERIES_PER_STATEMENT }, () => newId('webhookDelivery')),
  };
}

function eventEntries(v: EventValues, change?: { name: string; sql: SQL; before?: SQL | undefined }): SQL {
  // An array given as a value is one parameter (Drizzle would spread it into a list).
  const deliveryIds = Array.isArray(v.deliveryIds) ? sql.param(v.deliveryIds) : v.deliveryIds;
  return sql`subscribed as (
      select ${webhookEndpoints.id} as id from ${webhookEndpoints}
      where ${webhookEndpoints.environmentId} = ${v.eventEnvironment}
        and ${webhookEndpoints.status} = 'enabled'
        and (${webhookEndpoints.events} @> ${v.eventFilter}::jsonb or ${webhookEndpoints.events} @> '["*"]'::jsonb)
      for key share of ${webhookEndpoints}
    ),
    numbered as (select id, row_number() over (order by id) as n from subscribed),
    ${change?.before ? sql`${change.before},` : sql``}
    ${change ? sql`${sql.identifier(change.name)} as (${change.sql}),` : sql``}
    recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at)
      select ${v.eventId}, ${v.eventEnvironment}, ${v.eventName}, ${v.eventOrganization}, ${v.eventData}::jsonb, ${v.eventAt}::timestamptz
      ${change ? sql`from ${sql.identifier(change.name)}` : sql``}
      returning id
    ),
    delivered as (
      insert into ${webhookDeliveries} (id, environment_id, endpoint_id, event_id, status, next_attempt_at, created_at, updated_at)
      select planned.id, ${v.eventEnvironment}, numbered.id, recorded.id, 'pending', ${v.eventAt}::timestamptz, ${v.eventAt}::timestamptz, ${v.eventAt}::timestamptz
      from numbered
      join unnest(${deliveryIds}::text[]) with ordinality as planned(id, n) on planned.n = numbered.n
      cross join recorded
    )`;
}

/**
 * Appends an event in the caller's transaction (see `eventEntries`): one statement, and a second
 * only for an environment with more than DELIVERIES_PER_STATEMENT subscribed endpoints. `data` is
 * the resource as the API shows it (its wire shape).
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
): Promise<string> {
  const now = scope.now();
  const id = newId('event');
  const organization = organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null);
  const beyond = await rawRows<{ id: string }>(
    tx,
    sql`with ${eventEntries(eventValues(scope, id, event, data, organization, now))}
    select id from numbered where n > ${DELIVERIES_PER_STATEMENT} order by n`,
  );
  if (beyond.length > 0) {
    await tx.insert(webhookDeliveries).values(
      beyond.map((endpoint) => ({
        id: newId('webhookDelivery'),
        environmentId: scope.env.id,
        endpointId: endpoint.id,
        eventId: id,
        status: 'pending' as const,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })),
    );
  }
  return id;
}

/**
 * A change and its event in one autocommit statement — no BEGIN/COMMIT round trips, which is
 * most of what a small durable write costs (measured on create organization: ~1.1k → ~2.1k req/s
 * in short runs, 1,699–1,937 in a full run). `change` builds the change as a data-modifying
 * statement with RETURNING around `guard`, a condition it must put in its WHERE: the change then
 * writes nothing when more endpoints are subscribed than one statement queues deliveries for.
 * The statement is rendered once (`renderedOnce`): `change` gets the values by `names`, as
 * placeholders. The returned function resolves true when the change was written, false in that
 * case: the caller then takes its transactional path. `before`, when given, adds WITH entries
 * (`name as (…)`, comma-separated) that `change` may read, e.g. a parent row it updates.
 */
export function writeWithEvent<K extends string>(
  names: readonly K[],
  change: (values: Record<K, unknown>, guard: SQL) => SQL,
  before?: (values: Record<K, unknown>, guard: SQL) => SQL,
) {
  const guard = sql`(select count(*) from subscribed) <= ${DELIVERIES_PER_STATEMENT}`;
  const run = renderedOnce(
    [...names, ...EVENT_VALUES],
    (v) =>
      sql`with ${eventEntries(v, { name: 'changed', sql: change(v, guard), before: before?.(v, guard) })}
    select count(*)::int as written from changed`,
  );
  return async (
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
    const rows = await run<{ written: number }>(scope.db, all);
    return Number(rows[0]?.written ?? 0) > 0;
  };
}
