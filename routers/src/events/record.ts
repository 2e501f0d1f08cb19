import { type Db, newId } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';
import { insertEvent, insertEvents, type NewEvent } from './store.ts';

/** The events a transaction holds back to write at once (`withEventsBatched`), by its handle. */
const held = new WeakMap<Db, NewEvent[]>();

/**
 * An event's place in the order (its id and time), drawn before the event is known: recorded with
 * it (`recordEvent`'s `place`), the event comes before those recorded since the place was drawn.
 */
export interface EventPlace {
  id: string;
  at: Date;
}

export function eventPlace(scope: Scope): EventPlace {
  return { id: newId('event'), at: scope.now() };
}

/**
 * Appends an event in the caller's transaction: one row marked `fanout_pending`, whatever the
 * number of webhook endpoints (so an event exists exactly when its change committed); the webhook
 * worker expands it into deliveries later (`fanOutEvents`), off the request path. `data` is the
 * resource as the API shows it (its wire shape). It takes its place in the order now, or `place`.
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
  place: EventPlace = eventPlace(scope),
): Promise<string> {
  const { id } = place;
  const organization = organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null);
  const row: NewEvent = {
    id,
    environmentId: scope.env.id,
    event,
    organizationId: organization,
    data,
    createdAt: place.at,
    fanoutPending: true,
    actor: scope.actor ?? null,
    reason: scope.reason ?? null,
  };
  const batch = held.get(tx);
  if (batch) batch.push(row);
  else await insertEvent(tx, row);
  return id;
}

/** One event of a batch: its name, its data, and the organization when `data` does not name it. */
export interface EventToRecord {
  event: string;
  data: Record<string, unknown>;
  organizationId?: string | null;
}

/**
 * Appends many events in the caller's transaction in one statement, in the order given (ids are
 * generated in that order): what `recordEvent` does for each, for writes that change many rows at
 * once (a directory group's 1,000 new members, a directory's deprovisioning).
 */
export async function recordEvents(tx: Db, scope: Scope, list: EventToRecord[]): Promise<void> {
  const now = scope.now();
  const rows: NewEvent[] = list.map(({ event, data, organizationId }) => ({
    id: newId('event'),
    environmentId: scope.env.id,
    event,
    organizationId: organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null),
    data,
    createdAt: now,
    fanoutPending: true,
    actor: scope.actor ?? null,
    reason: scope.reason ?? null,
  }));
  const batch = held.get(tx);
  if (batch) batch.push(...rows);
  else await insertEvents(tx, rows);
}

/**
 * Runs `fn` in the transaction `tx` with its events (`recordEvent`, `recordEvents`, whichever
 * service records them) held back and written in one statement when `fn` is done, in the order
 * they were recorded: a write that records several (a provisioned directory user: `user.created`,
 * `organization_membership.created`, `dsync.user.created`) pays one insert. Nothing in `fn` may
 * read its own events back.
 */
export async function withEventsBatched<T>(tx: Db, fn: () => Promise<T>): Promise<T> {
  if (held.has(tx)) return fn();
  const batch: NewEvent[] = [];
  held.set(tx, batch);
  try {
    const result = await fn();
    await insertEvents(tx, batch);
    return result;
  } finally {
    held.delete(tx);
  }
}
