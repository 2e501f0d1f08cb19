import { type Db, events, paginate } from '@atrium/db';
import { and, eq, gte, inArray, lt, lte, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import type { Event, ListEventsInput } from './schemas.ts';

/** Events are kept this long; older ones are never listed and are purged by the worker. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

type EventRow = typeof events.$inferSelect;

/** The single place that turns an event row into its wire shape. */
export function toEvent(row: EventRow): Event {
  return { object: 'event', id: row.id, event: row.event, data: row.data, created_at: iso(row.createdAt) };
}

export async function listEvents(scope: Scope, input: z.infer<typeof ListEventsInput>) {
  const params = pageParams(input);
  const oldest = new Date(scope.now().getTime() - EVENT_RETENTION_MS);
  const where = and(
    eq(events.environmentId, scope.env.id),
    gte(events.createdAt, oldest),
    input.events && input.events.length > 0 ? inArray(events.event, input.events) : undefined,
    input.organization_id ? eq(events.organizationId, input.organization_id) : undefined,
    input.range_start ? gte(events.createdAt, new Date(input.range_start)) : undefined,
    input.range_end ? lte(events.createdAt, new Date(input.range_end)) : undefined,
  );
  const page = await paginate(
    params,
    events.id,
    (q) => scope.db.select().from(events).where(and(where, q.keyset)).orderBy(q.orderBy).limit(q.limit),
    (row) => row.id,
  );
  return asList(page, toEvent);
}

/**
 * Deletes events past the retention period (and, by cascade, their deliveries), in batches so
 * that no single statement holds many locks.
 */
export async function purgeExpiredEvents(db: Db, now: Date, batchSize = 5_000): Promise<number> {
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_MS);
  let total = 0;
  for (;;) {
    // The batch's ids as an array: the delete then finds them by primary key whatever the
    // planner estimates. As `id in (select …)`, the generic plan every statement runs with (see
    // openPostgres) joins by hash over a scan of the whole table, once per batch.
    const expired = db
      .select({ id: events.id })
      .from(events)
      .where(lt(events.createdAt, cutoff))
      .orderBy(events.createdAt)
      .limit(batchSize);
    // A transaction of its own, though it is one statement: on PostgreSQL that puts it on one of
    // the transaction connections rather than on a pipelined statement connection, where the
    // requests' statements would queue behind a delete of thousands of rows (see openPostgres).
    const deleted = await db.transaction((tx) =>
      tx.delete(events).where(sql`${events.id} = any(array(${expired}))`).returning({ id: events.id }),
    );
    total += deleted.length;
    if (deleted.length < batchSize) return total;
  }
}
