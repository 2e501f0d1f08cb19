import {
  type Db,
  equalsLiteral,
  events,
  newId,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import { and, asc, eq, inArray, lte, not } from 'drizzle-orm';
import { toEvent } from '../events/service.ts';

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
 * Takes up to `limit` due deliveries to enabled endpoints, skipping rows another worker holds
 * (`FOR UPDATE SKIP LOCKED`) and endpoints in `busyEndpoints` (already at this worker's
 * per-endpoint limit), and leases them (`next_attempt_at` = the lease end) in one short
 * transaction; the HTTP call happens outside any transaction.
 */
export async function takeDueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  busyEndpoints: string[] = [],
  environmentId?: string,
): Promise<DueDelivery[]> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: events })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(
        and(
          // A literal: the generic plan then uses webhook_deliveries_due_idx (partial on it).
          equalsLiteral(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, now),
          eq(webhookEndpoints.status, 'enabled'),
          busyEndpoints.length > 0 ? not(inArray(webhookDeliveries.endpointId, busyEndpoints)) : undefined,
          environmentId ? eq(webhookDeliveries.environmentId, environmentId) : undefined,
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
      .limit(limit)
      .for('update', { of: webhookDeliveries, skipLocked: true });
    if (rows.length === 0) return [];
    await tx
      .update(webhookDeliveries)
      .set({ nextAttemptAt: leaseUntil })
      .where(
        inArray(
          webhookDeliveries.id,
          rows.map((r) => r.delivery.id),
        ),
      );
    return rows.map(({ delivery, endpoint, event }) => ({
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
  });
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
  await db.transaction(async (tx) => {
    await tx.insert(webhookAttempts).values({
      id: newId('webhookAttempt'),
      environmentId: delivery.environmentId,
      deliveryId: delivery.id,
      attemptedAt,
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: Math.round(outcome.durationMs),
    });
    await tx
      .update(webhookDeliveries)
      .set({
        status,
        attempts: delivery.attempts + 1,
        nextAttemptAt: status === 'pending' ? retryAt : null,
        lastAttemptAt: attemptedAt,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        updatedAt: attemptedAt,
      })
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.environmentId, delivery.environmentId)));
  });
  return status;
}

/** Gives leased deliveries back, due at `at` (those a worker took but will not attempt now). */
export async function releaseDeliveries(db: Db, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: at })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, 'pending')));
}
