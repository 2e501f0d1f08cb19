import { type Db, newId } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';
import { insertEvent, insertEvents } from './store.ts';

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
    actor: scope.actor ?? null,
    reason: scope.reason ?? null,
  });
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
  await insertEvents(
    tx,
    list.map(({ event, data, organizationId }) => ({
      id: newId('event'),
      environmentId: scope.env.id,
      event,
      organizationId: organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null),
      data,
      createdAt: now,
      fanoutPending: true,
      actor: scope.actor ?? null,
      reason: scope.reason ?? null,
    })),
  );
}
