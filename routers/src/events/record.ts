import { type Db, events, newId, renderedOnce } from '@atrium/db';
import { type SQL, sql } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { markCommittedEntry } from '../idempotency/store.ts';

/** The values of an event's WITH entry, as `eventValues` makes them (or placeholders for them). */
const EVENT_VALUES = ['eventEnvironment', 'eventId', 'eventName', 'eventOrganization', 'eventData', 'eventAt'] as const;
type EventValue = (typeof EVENT_VALUES)[number];
type EventValues = Record<EventValue, unknown>;
/** The Idempotency-Key claim's values, filled when the scope carries one. */
const CLAIM_VALUES = ['claimEnvironment', 'claimKey'] as const;

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
  await tx.insert(events).values({
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
 * A change and its event in one autocommit statement — no BEGIN/COMMIT round trips, which is
 * most of what a small durable write costs (measured on create organization: ~1.1k → ~2.1k req/s
 * in short runs, 1,699–1,937 in a full run). `change` builds the change as a data-modifying
 * statement with RETURNING; the event is written once per row it returns (so not at all when it
 * wrote nothing). The statement is rendered once (`renderedOnce`): `change` gets the values by
 * `names`, as placeholders. The returned function resolves true when the change was written,
 * false otherwise: the caller then takes its transactional path (which answers 404, 409 or 422).
 * `before`, when given, adds WITH entries (`name as (…)`) that `change` may read, e.g. a parent
 * row it updates. When the scope carries an Idempotency-Key claim, the same statement also marks
 * the key `committed` if it wrote (so a lost answer is never run twice): the one write path.
 */
export function writeWithEvent<K extends string>(
  names: readonly K[],
  change: (values: Record<K, unknown>) => SQL,
  before?: (values: Record<K, unknown>) => SQL,
) {
  const build = (v: Record<K | EventValue, unknown>, mark: SQL) =>
    sql`with ${before ? sql`${before(v)},` : sql``} changed as (${change(v)}),
    recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at, fanout_pending)
      select ${v.eventId}, ${v.eventEnvironment}, ${v.eventName}, ${v.eventOrganization}, ${v.eventData}::jsonb, ${v.eventAt}::timestamptz, true
      from changed
      returning id
    )${mark}
    select count(*)::int as written from changed`;
  const plain = renderedOnce([...names, ...EVENT_VALUES], (v) => build(v, sql``));
  const marking = renderedOnce([...names, ...EVENT_VALUES, ...CLAIM_VALUES], (v) =>
    build(v, sql`, ${markCommittedEntry(v.claimEnvironment, v.claimKey)}`),
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
    const claim = scope.idempotency;
    const rows = claim
      ? await marking<{ written: number }>(
          scope.db,
          Object.assign(all, { claimEnvironment: claim.environmentId, claimKey: claim.key }),
        )
      : await plain<{ written: number }>(scope.db, all);
    return Number(rows[0]?.written ?? 0) > 0;
  };
}
