import { type Db, events, newId, renderedOnce } from '@atrium/db';
import { type SQL, sql } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { insertEvent } from './store.ts';

/** The names of the event's values in `writeWithEvent`'s statement. */
const EVENT_VALUES = ['eventEnvironment', 'eventId', 'eventName', 'eventOrganization', 'eventData', 'eventAt'] as const;
type EventValues = Record<(typeof EVENT_VALUES)[number], unknown>;

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
  };
}

/**
 * Appends an event in the caller's transaction: one row marked `fanout_pending`, whatever the
 * number of webhook endpoints (so an event exists exactly when its change committed); the webhook
 * worker expands it into deliveries later (`fanOutEvents`), off the request path. `data` is the
 * resource as the API shows it (its wire shape).
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
): Promise<string> {
  const id = newId('event');
  const organization = organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null);
  await insertEvent(tx, {
    id,
    environmentId: scope.env.id,
    event,
    organizationId: organization,
    data,
    createdAt: scope.now(),
    fanoutPending: true,
  });
  return id;
}

/**
 * A change and its event in one autocommit statement, rendered once (bench/README.md, "Second
 * pass"). `change(values)` is a data-modifying statement with RETURNING, one event per row it
 * returns; the writer resolves false when it wrote nothing, and the caller's transactional path
 * then answers 404, 409 or 422. `before` adds WITH entries (`name as (…)`) `change` may read.
 */
export function writeWithEvent<K extends string>(
  names: readonly K[],
  change: (values: Record<K, unknown>) => SQL,
  before?: (values: Record<K, unknown>) => SQL,
) {
  const run = renderedOnce(
    [...names, ...EVENT_VALUES],
    (v) =>
      sql`with ${before ? sql`${before(v)},` : sql``} changed as (${change(v)}),
    recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending)
      select ${v.eventId}, ${v.eventEnvironment}, ${v.eventName}, ${v.eventOrganization}, ${v.eventData}::jsonb, ${v.eventAt}::timestamptz, true
      from changed
      returning id
    )
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
