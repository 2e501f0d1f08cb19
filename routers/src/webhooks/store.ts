import {
  claimRoundRobin,
  type Db,
  environmentsWith,
  equalsLiteral,
  type FairTake,
  interleaveByEnvironment,
  lockEnvironment,
  type PageParams,
  paginate,
  rawRows,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import { and, asc, eq, gt, inArray, lte, not, notLike, type SQL, sql } from 'drizzle-orm';
import { loadScoped, orNotFound, scopedId } from '../common/store.ts';
import {
  claimPendingEvents,
  clearFanoutPending,
  type EventRow,
  eventFields,
  eventsAsEv,
  type PendingEvent,
} from '../events/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { assertBelowQuota } from '../quotas.ts';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type NewEndpoint = typeof webhookEndpoints.$inferInsert;
export type { EventRow, PendingEvent };
export type NewDelivery = typeof webhookDeliveries.$inferInsert;
export type NewAttempt = typeof webhookAttempts.$inferInsert;

// Endpoints

/**
 * Inserts an endpoint unless the environment has its quota of them: counted under the
 * environment's lock, since every event fans out to every endpoint.
 */
export function insertEndpoint(db: Db, deps: Deps, row: NewEndpoint & { environmentId: string }) {
  return db.transaction(async (tx) => {
    await lockEnvironment(tx, row.environmentId);
    const mine = eq(webhookEndpoints.environmentId, row.environmentId);
    await assertBelowQuota(tx, deps, 'webhookEndpointsPerEnvironment', webhookEndpoints, mine);
    const [inserted] = await tx.insert(webhookEndpoints).values(row).returning();
    return inserted as EndpointRow;
  });
}

export function pageOfEndpoints(db: Db, environmentId: string, params: PageParams) {
  return paginate(
    params,
    webhookEndpoints.id,
    (q) =>
      db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.environmentId, environmentId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

export function loadEndpoint(db: Db, environmentId: string, id: string): Promise<EndpointRow> {
  return loadScoped(db, webhookEndpoints, 'webhook_endpoint', environmentId, id);
}

export async function updateEndpoint(
  db: Db,
  environmentId: string,
  id: string,
  changes: Partial<NewEndpoint>,
): Promise<EndpointRow> {
  const [row] = await db
    .update(webhookEndpoints)
    .set(changes)
    .where(scopedId(webhookEndpoints, environmentId, id))
    .returning();
  return orNotFound(row, 'webhook_endpoint', id);
}

/** Deletes the endpoint; its queued deliveries go with it (foreign key cascade). */
export async function deleteEndpoint(db: Db, environmentId: string, id: string): Promise<void> {
  const [row] = await db
    .delete(webhookEndpoints)
    .where(scopedId(webhookEndpoints, environmentId, id))
    .returning({ id: webhookEndpoints.id });
  orNotFound(row, 'webhook_endpoint', id);
}

/** A page of endpoints (by id, after `after`) whose secret is not sealed (`v1.` prefix). */
export function endpointsWithPlainSecrets(db: Db, after: string, pageSize: number) {
  return db
    .select({ id: webhookEndpoints.id, secret: webhookEndpoints.secret })
    .from(webhookEndpoints)
    .where(and(gt(webhookEndpoints.id, after), notLike(webhookEndpoints.secret, 'v1.%')))
    .orderBy(asc(webhookEndpoints.id))
    .limit(pageSize);
}

/** Replaces an endpoint's secret if it is still `old`; true when it did. */
export async function replaceSecret(db: Db, id: string, old: string, secret: string): Promise<boolean> {
  const updated = await db
    .update(webhookEndpoints)
    .set({ secret })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.secret, old)))
    .returning({ id: webhookEndpoints.id });
  return updated.length > 0;
}

// Fan-out: recorded events into deliveries

/** The endpoints an event's environment may deliver it to. */
export type FanoutEndpoint = Pick<EndpointRow, 'id' | 'environmentId' | 'events' | 'createdAt'>;

/** Delivery rows per insert statement of a fan-out (8 parameters each, well under 65,535). */
const FANOUT_INSERT_CHUNK = 1_000;

/** The enabled endpoints of these environments, KEY SHARE locked: a delete meanwhile waits. */
function enabledEndpoints(tx: Db, environmentIds: string[]): Promise<FanoutEndpoint[]> {
  return tx
    .select({
      id: webhookEndpoints.id,
      environmentId: webhookEndpoints.environmentId,
      events: webhookEndpoints.events,
      createdAt: webhookEndpoints.createdAt,
    })
    .from(webhookEndpoints)
    .where(and(inArray(webhookEndpoints.environmentId, environmentIds), eq(webhookEndpoints.status, 'enabled')))
    .orderBy(webhookEndpoints.id)
    .for('key share');
}

/**
 * One fan-out step in one transaction: claims pending events (`claimPendingEvents`), inserts the
 * deliveries `plan` makes of them and their environments' endpoints, and clears their mark. The
 * unique (endpoint, event) index makes a repeat a no-op; a crash rolls the whole step back.
 */
export function fanOutPendingEvents(
  db: Db,
  limit: number,
  fair: FairTake,
  plan: (events: PendingEvent[], endpoints: FanoutEndpoint[]) => NewDelivery[],
): Promise<{ events: number; deliveries: number; cursor: string }> {
  return db.transaction(async (tx) => {
    const { rows, cursor } = await claimPendingEvents(tx, limit, fair);
    if (rows.length === 0) return { events: 0, deliveries: 0, cursor };
    const endpoints = await enabledEndpoints(tx, [...new Set(rows.map((row) => row.environmentId))]);
    const queued = plan(rows, endpoints);
    for (let i = 0; i < queued.length; i += FANOUT_INSERT_CHUNK) {
      await tx
        .insert(webhookDeliveries)
        .values(queued.slice(i, i + FANOUT_INSERT_CHUNK))
        .onConflictDoNothing({ target: [webhookDeliveries.endpointId, webhookDeliveries.eventId] });
    }
    const ids = rows.map((row) => row.id);
    await clearFanoutPending(tx, ids);
    return { events: rows.length, deliveries: queued.length, cursor };
  });
}

// Deliveries

/** What a delivery claim skips: endpoints and environments this worker already has at their cap. */
export interface BusyTargets {
  endpoints: string[];
  environments: string[];
}

/** A claimed delivery with its endpoint and event, as stored. */
export interface ClaimedDelivery {
  delivery: typeof webhookDeliveries.$inferSelect;
  endpoint: EndpointRow;
  event: EventRow;
}

/** Up to `limit` due deliveries to enabled endpoints, round-robin by environment, SKIP LOCKED. */
function claimDue(tx: Db, now: Date, limit: number, fair: FairTake, busy: BusyTargets) {
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
  return claimRoundRobin(fair.cursor ?? '', limit, claim);
}

/**
 * Takes due deliveries (`claimDue`, skipping `busy` targets) and leases them until `leaseUntil`
 * (their `next_attempt_at`) in one short transaction. Each environment's deliveries come in due
 * order, interleaved by environment.
 */
export function leaseDueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  leaseUntil: Date,
  fair: FairTake,
  busy: BusyTargets,
): Promise<{ claimed: ClaimedDelivery[]; cursor: string }> {
  const d = webhookDeliveries;
  return db.transaction(async (tx) => {
    const { rows: claimed, cursor } = await claimDue(tx, now, limit, fair, busy);
    if (claimed.length === 0) return { claimed: [], cursor };
    const ids = claimed.map((row) => row.id);
    await tx.update(d).set({ nextAttemptAt: leaseUntil }).where(inArray(d.id, ids));
    const rows = await tx
      .select({ delivery: d, endpoint: webhookEndpoints, event: eventFields })
      .from(d)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, d.endpointId))
      .innerJoin(eventsAsEv, sql`ev.id = ${d.eventId}`)
      .where(inArray(d.id, ids));
    const byId = new Map(rows.map((row) => [row.delivery.id, row]));
    const ordered = interleaveByEnvironment(claimed).flatMap(({ id }) => byId.get(id) ?? []);
    return { claimed: ordered, cursor };
  });
}

/** Stores one attempt and the delivery's new state, together. */
export async function saveAttempt(
  db: Db,
  attempt: NewAttempt & { deliveryId: string; environmentId: string },
  delivery: Partial<typeof webhookDeliveries.$inferInsert>,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(webhookAttempts).values(attempt);
    await tx
      .update(webhookDeliveries)
      .set(delivery)
      .where(scopedId(webhookDeliveries, attempt.environmentId, attempt.deliveryId));
  });
}

/** Gives leased deliveries back, due at `at` (those a worker took but will not attempt now). */
export async function releaseDeliveries(db: Db, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: at })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, 'pending')));
}

// The operator console's delivery log

/** The endpoint's latest deliveries (newest first, at most `limit`), with their event's name. */
export function deliveriesOfEndpoint(db: Db, environmentId: string, endpointId: string, limit: number) {
  const d = webhookDeliveries;
  return db
    .select({ delivery: d, event: eventFields.event })
    .from(d)
    .innerJoin(eventsAsEv, sql`ev.id = ${d.eventId}`)
    .where(and(eq(d.environmentId, environmentId), eq(d.endpointId, endpointId)))
    .orderBy(sql`${d.id} desc`)
    .limit(limit);
}

/** Makes a delivery due now again, whatever its state; undefined when it is not in the environment. */
export async function requeueDelivery(db: Db, environmentId: string, id: string, now: Date) {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now, updatedAt: now })
    .where(scopedId(webhookDeliveries, environmentId, id))
    .returning();
  return row;
}
