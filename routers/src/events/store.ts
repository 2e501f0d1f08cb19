import { type Db, events, type PageParams, paginate } from '@atrium/db';
import { and, eq, gte, inArray, lt, lte, sql } from 'drizzle-orm';

export type EventRow = typeof events.$inferSelect;
export type NewEvent = typeof events.$inferInsert;

/** Which events a list returns, besides the environment's. */
export interface EventFilter {
  /** The oldest creation time listed (the retention period's start). */
  since: Date;
  names?: string[] | undefined;
  organizationId?: string | undefined;
  rangeStart?: Date | undefined;
  rangeEnd?: Date | undefined;
}

/** Appends one event row in the caller's transaction. */
export async function insertEvent(db: Db, row: NewEvent): Promise<void> {
  await db.insert(events).values(row);
}

/** One page of the environment's events matching `filter`, by id. */
export function pageOfEvents(db: Db, environmentId: string, filter: EventFilter, params: PageParams) {
  const where = and(
    eq(events.environmentId, environmentId),
    gte(events.createdAt, filter.since),
    filter.names && filter.names.length > 0 ? inArray(events.event, filter.names) : undefined,
    filter.organizationId ? eq(events.organizationId, filter.organizationId) : undefined,
    filter.rangeStart ? gte(events.createdAt, filter.rangeStart) : undefined,
    filter.rangeEnd ? lte(events.createdAt, filter.rangeEnd) : undefined,
  );
  return paginate(
    params,
    events.id,
    (q) => db.select().from(events).where(and(where, q.keyset)).orderBy(q.orderBy).limit(q.limit),
    (row) => row.id,
  );
}

/**
 * Deletes up to `batchSize` of the oldest events created before `cutoff` (their deliveries go
 * by cascade); returns how many it deleted.
 */
export async function deleteEventsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  // The ids as an array, so the delete finds them by primary key: `id in (select …)` gets a
  // generic plan that hash-joins over the whole table.
  const expired = db
    .select({ id: events.id })
    .from(events)
    .where(lt(events.createdAt, cutoff))
    .orderBy(events.createdAt)
    .limit(batchSize);
  // A transaction, though one statement: on PostgreSQL it then runs on a transaction
  // connection, not queued ahead of the requests' statements (see openPostgres).
  const deleted = await db.transaction((tx) =>
    tx.delete(events).where(sql`${events.id} = any(array(${expired}))`).returning({ id: events.id }),
  );
  return deleted.length;
}
