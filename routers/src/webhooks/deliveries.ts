import { type Db, type FairTake, newId } from '@atrium/db';
import { toEvent } from '../events/service.ts';
import {
  type BusyTargets,
  type FanoutEndpoint,
  fanOutPendingEvents,
  leaseDueDeliveries,
  type NewDelivery,
  type PendingEvent,
  saveAttempt,
} from './store.ts';

/** Whether an endpoint gets an event: its environment's, made after it, and subscribed (or `*`). */
function subscribes(endpoint: FanoutEndpoint, event: PendingEvent, at: Date): boolean {
  if (endpoint.environmentId !== event.environmentId || endpoint.createdAt.getTime() > at.getTime()) return false;
  return endpoint.events.includes('*') || endpoint.events.includes(event.event);
}

/** One delivery per subscribed endpoint, in event id order (so each endpoint's follow its events). */
function deliveriesOf(pending: PendingEvent[], endpoints: FanoutEndpoint[], now: Date): NewDelivery[] {
  const queued: NewDelivery[] = [];
  for (const event of [...pending].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const at = new Date(event.createdAt);
    for (const endpoint of endpoints) {
      if (!subscribes(endpoint, event, at)) continue;
      queued.push({
        id: newId('webhookDelivery'),
        environmentId: event.environmentId,
        endpointId: endpoint.id,
        eventId: event.id,
        status: 'pending',
        nextAttemptAt: at,
        createdAt: at,
        updatedAt: now,
      });
    }
  }
  return queued;
}

/**
 * Expands recorded events into webhook deliveries, off the request path: up to `limit` events
 * still marked `fanout_pending`, round-robin by environment (at most `perEnvironment` of each),
 * each into one delivery per enabled endpoint subscribed to it. Several workers never expand the
 * same event, and each delivery exists exactly once (see `fanOutPendingEvents`).
 */
export function fanOutEvents(
  db: Db,
  now: Date,
  limit: number,
  fair: FairTake,
): Promise<{ events: number; deliveries: number; cursor: string }> {
  return fanOutPendingEvents(db, limit, fair, (pending, endpoints) => deliveriesOf(pending, endpoints, now));
}

/** One delivery taken by the worker: where to send what, signed with which secret. */
export interface DueDelivery {
  id: string;
  environmentId: string;
  endpointId: string;
  url: string;
  /** The secret as stored (sealed): `openWebhookSecret` gives the signing secret. */
  secret: string;
  /** The exact body to send (and sign). */
  body: string;
  attempts: number;
  createdAt: Date;
  leaseUntil: Date;
}

/**
 * Takes up to `limit` due deliveries to enabled endpoints, round-robin by environment (at most
 * `perEnvironment` of each, starting after `cursor`), so one environment's backlog or slow
 * receiver cannot fill the worker; skips the endpoints and environments in `busy`, and leases
 * them for `leaseMs`. The HTTP call happens outside any transaction.
 */
export async function takeDueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  fair: FairTake,
  busy: BusyTargets = { endpoints: [], environments: [] },
): Promise<{ deliveries: DueDelivery[]; cursor: string }> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const { claimed, cursor } = await leaseDueDeliveries(db, now, limit, leaseUntil, fair, busy);
  const deliveries = claimed.map(({ delivery, endpoint, event }) => ({
    id: delivery.id,
    environmentId: delivery.environmentId,
    endpointId: endpoint.id,
    url: endpoint.url,
    secret: endpoint.secret,
    body: JSON.stringify(toEvent(event)),
    attempts: delivery.attempts,
    createdAt: delivery.createdAt,
    leaseUntil,
  }));
  return { deliveries, cursor };
}

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records one attempt and its consequence: delivered, retried at `retryAt`, or failed for
 * good when `retryAt` is null.
 */
export async function recordDeliveryAttempt(
  db: Db,
  delivery: Pick<DueDelivery, 'id' | 'environmentId' | 'attempts'>,
  outcome: AttemptOutcome,
  attemptedAt: Date,
  retryAt: Date | null,
): Promise<'delivered' | 'pending' | 'failed'> {
  const status = outcome.ok ? 'delivered' : retryAt ? 'pending' : 'failed';
  await saveAttempt(
    db,
    {
      id: newId('webhookAttempt'),
      environmentId: delivery.environmentId,
      deliveryId: delivery.id,
      attemptedAt,
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: Math.round(outcome.durationMs),
    },
    {
      status,
      attempts: delivery.attempts + 1,
      nextAttemptAt: status === 'pending' ? retryAt : null,
      lastAttemptAt: attemptedAt,
      lastStatusCode: outcome.statusCode,
      lastError: outcome.error,
      updatedAt: attemptedAt,
    },
  );
  return status;
}
