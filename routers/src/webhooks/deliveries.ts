import {
  claimRoundRobin,
  type Db,
  environmentsWith,
  equalsLiteral,
  events,
  type FairTake,
  interleaveByEnvironment,
  newId,
  rawRows,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import { and, eq, inArray, lte, not, type SQL, sql } from 'drizzle-orm';
import { toEvent } from '../events/service.ts';

/** Delivery rows per insert statement of a fan-out (8 parameters each, well under 65,535). */
const FANOUT_INSERT_CHUNK = 1_000;

/**
 * Expands recorded events into webhook deliveries, off the request path: takes up to `limit`
 * events still marked `fanout_pending`, round-robin by environment (at most `perEnvironment`
 * of each), locked with `FOR UPDATE SKIP LOCKED`, and in the same transaction queues one
 * delivery per enabled endpoint subscribed to the event (endpoints made after the event get
 * none) and clears the mark. Several workers never expand the same event, a crash rolls the
 * whole step back, and the unique (endpoint, event) index makes a repeat a no-op: each
 * delivery exists exactly once. Endpoints are KEY SHARE locked, so one deleted meanwhile waits.
 */
export async function fanOutEvents(
  db: Db,
  now: Date,
  limit: number,
  fair: FairTake,
): Promise<{ events: number; deliveries: number; cursor: string }> {
  const e = events;
  const pending = and(
    // The bare column: the generic plan then uses events_fanout_pending_idx (partial on it).
    sql`${e.fanoutPending}`,
    fair.environments ? inArray(e.environmentId, fair.environments) : undefined,
  ) as SQL;
  return db.transaction(async (tx) => {
    const claim = (after: string, upto: string, n: number) =>
      rawRows<{ id: string; environmentId: string; event: string; createdAt: string | Date }>(
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
    const { rows, cursor } = await claimRoundRobin(fair.cursor ?? '', limit, claim);
    if (rows.length === 0) return { events: 0, deliveries: 0, cursor };
    const endpoints = await tx
      .select({
        id: webhookEndpoints.id,
        environmentId: webhookEndpoints.environmentId,
        events: webhookEndpoints.events,
        createdAt: webhookEndpoints.createdAt,
      })
      .from(webhookEndpoints)
      .where(
        and(
          inArray(webhookEndpoints.environmentId, [...new Set(rows.map((row) => row.environmentId))]),
          eq(webhookEndpoints.status, 'enabled'),
        ),
      )
      .orderBy(webhookEndpoints.id)
      .for('key share');
    const queued: (typeof webhookDeliveries.$inferInsert)[] = [];
    // In event id order, so an endpoint's deliveries are made (and ordered) as its events were.
    for (const event of [...rows].sort((a, b) => (a.id < b.id ? -1 : 1))) {
      const at = new Date(event.createdAt);
      for (const endpoint of endpoints) {
        if (endpoint.environmentId !== event.environmentId || endpoint.createdAt.getTime() > at.getTime()) continue;
        if (!endpoint.events.includes('*') && !endpoint.events.includes(event.event)) continue;
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
    for (let i = 0; i < queued.length; i += FANOUT_INSERT_CHUNK) {
      await tx
        .insert(webhookDeliveries)
        .values(queued.slice(i, i + FANOUT_INSERT_CHUNK))
        .onConflictDoNothing({ target: [webhookDeliveries.endpointId, webhookDeliveries.eventId] });
    }
    await tx
      .update(e)
      .set({ fanoutPending: false })
      .where(
        inArray(
          e.id,
          rows.map((row) => row.id),
        ),
      );
    return { events: rows.length, deliveries: queued.length, cursor };
  });
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

/** What a delivery claim skips: endpoints and environments this worker already has at their cap. */
export interface BusyTargets {
  endpoints: string[];
  environments: string[];
}

/**
 * Takes up to `limit` due deliveries to enabled endpoints, round-robin by environment (at most
 * `perEnvironment` of each, starting after `cursor`), so one environment's backlog or slow
 * receiver cannot fill the worker; skips rows another worker holds (`FOR UPDATE SKIP LOCKED`)
 * and the endpoints and environments in `busy`, and leases them (`next_attempt_at` = the lease
 * end) in one short transaction; the HTTP call happens outside any transaction. Each
 * environment's deliveries come in due order (then id order), interleaved by environment.
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
  const d = webhookDeliveries;
  // The environments are found by the index's own predicate (a literal, so the generic plan
  // uses webhook_deliveries_due_idx): one probe each, however many deliveries wait for a retry.
  const pending = and(
    equalsLiteral(d.status, 'pending'),
    fair.environments ? inArray(d.environmentId, fair.environments) : undefined,
  ) as SQL;
  const due = and(pending, lte(d.nextAttemptAt, now)) as SQL;
  const takeable = and(
    busy.endpoints.length > 0 ? not(inArray(d.endpointId, busy.endpoints)) : undefined,
    busy.environments.length > 0 ? not(inArray(d.environmentId, busy.environments)) : undefined,
    sql`exists (select 1 from ${webhookEndpoints} where ${webhookEndpoints.id} = ${d.endpointId} and ${equalsLiteral(webhookEndpoints.status, 'enabled')})`,
  );
  return db.transaction(async (tx) => {
    const claim = (after: string, upto: string, n: number) =>
      rawRows<{ id: string; environmentId: string }>(
        tx,
        sql`with recursive ${environmentsWith(d, d.environmentId, pending, after, upto)}
        select taken.id, taken.environment_id as "environmentId" from envs cross join lateral (
          select ${d.id} as id, ${d.environmentId} as environment_id from ${d}
          where ${due} and ${d.environmentId} = envs.environment_id and ${takeable}
          order by ${d.nextAttemptAt}, ${d.id} limit ${fair.perEnvironment}
          for update skip locked
        ) as taken
        limit ${n}`,
      );
    const { rows: claimed, cursor } = await claimRoundRobin(fair.cursor ?? '', limit, claim);
    if (claimed.length === 0) return { deliveries: [], cursor };
    const ids = claimed.map((row) => row.id);
    await tx.update(d).set({ nextAttemptAt: leaseUntil }).where(inArray(d.id, ids));
    const rows = await tx
      .select({ delivery: d, endpoint: webhookEndpoints, event: events })
      .from(d)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, d.endpointId))
      .innerJoin(events, eq(events.id, d.eventId))
      .where(inArray(d.id, ids));
    const byId = new Map(rows.map((row) => [row.delivery.id, row]));
    const deliveries = interleaveByEnvironment(claimed).flatMap(({ id }) => {
      const row = byId.get(id);
      if (!row) return [];
      const { delivery, endpoint, event } = row;
      return [
        {
          id: delivery.id,
          environmentId: delivery.environmentId,
          endpointId: endpoint.id,
          url: endpoint.url,
          secret: endpoint.secret,
          body: JSON.stringify(toEvent(event)),
          attempts: delivery.attempts,
          createdAt: delivery.createdAt,
          leaseUntil,
        },
      ];
    });
    return { deliveries, cursor };
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
