import {
  auditLogEvents,
  auditLogStreams,
  claimRoundRobin,
  type Db,
  environmentsWith,
  equalsLiteral,
  type FairTake,
  interleaveByEnvironment,
  rawRows,
} from '@atrium/db';
import { and, eq, inArray, isNull, lte, or, type SQL, sql } from 'drizzle-orm';

export type AuditLogStreamRow = typeof auditLogStreams.$inferSelect;
export type StreamEventRow = typeof auditLogEvents.$inferSelect;

/**
 * The log-stream delivery's SQL (routers/src/audit-logs/streams/delivery.ts holds its rules),
 * apart from the setup's store beside it.
 */

/**
 * Up to `limit` due active streams, round-robin by environment (at most `fair.perEnvironment` of
 * each), locked SKIP LOCKED. A stream is due when `next_attempt_at` is past or unset.
 */
function claimDue(tx: Db, now: Date, limit: number, fair: FairTake) {
  const s = auditLogStreams;
  const active = and(
    equalsLiteral(s.state, 'active'),
    fair.environments ? inArray(s.environmentId, fair.environments) : undefined,
  ) as SQL;
  const due = or(isNull(s.nextAttemptAt), lte(s.nextAttemptAt, now)) as SQL;
  const claim = (after: string, upto: string, n: number) =>
    rawRows<{ id: string; environmentId: string }>(
      tx,
      sql`with recursive ${environmentsWith(s, s.environmentId, active, after, upto)}
      select taken.id, taken.environment_id as "environmentId" from envs cross join lateral (
        select ${s.id} as id, ${s.environmentId} as environment_id from ${s}
        where ${active} and ${due} and ${s.environmentId} = envs.environment_id
        order by ${s.nextAttemptAt} nulls first, ${s.id} limit ${fair.perEnvironment}
        for update skip locked
      ) as taken
      limit ${n}`,
    );
  return claimRoundRobin(fair.cursor ?? '', limit, claim);
}

/**
 * Takes due streams and leases them until `leaseUntil` (their `next_attempt_at`) in one short
 * transaction, so one stream has at most one batch in flight (which keeps its events in order).
 */
export function leaseDueStreams(
  db: Db,
  now: Date,
  limit: number,
  leaseUntil: Date,
  fair: FairTake,
): Promise<{ streams: AuditLogStreamRow[]; cursor: string }> {
  const s = auditLogStreams;
  return db.transaction(async (tx) => {
    const { rows: claimed, cursor } = await claimDue(tx, now, limit, fair);
    if (claimed.length === 0) return { streams: [], cursor };
    const ids = claimed.map((row) => row.id);
    const rows = await tx.update(s).set({ nextAttemptAt: leaseUntil }).where(inArray(s.id, ids)).returning();
    const byId = new Map(rows.map((row) => [row.id, row]));
    return { streams: interleaveByEnvironment(claimed).flatMap(({ id }) => byId.get(id) ?? []), cursor };
  });
}

/**
 * The next `limit` events of the stream's organization after its cursor, in commit order: by
 * (tx_id, id), and only those whose transaction is older than every transaction still running
 * (`tx_id < pg_snapshot_xmin(pg_current_snapshot())`). An event whose id was made before another's
 * but that commits after it has a larger tx_id, so it comes after the cursor, never behind it.
 * When the cursor's own event is gone (retention), the cursor falls back to the id alone.
 */
export async function nextStreamBatch(db: Db, stream: AuditLogStreamRow, limit: number): Promise<StreamEventRow[]> {
  const e = auditLogEvents;
  const mine = and(eq(e.environmentId, stream.environmentId), eq(e.organizationId, stream.organizationId)) as SQL;
  let after: SQL | undefined;
  if (stream.deliveredThrough !== null) {
    const [cursor] = await db
      .select({ txId: e.txId })
      .from(e)
      .where(and(mine, eq(e.id, stream.deliveredThrough)))
      .limit(1);
    after = cursor
      ? sql`(${e.txId}, ${e.id}) > (${cursor.txId}::xid8, ${stream.deliveredThrough}::text collate "C")`
      : sql`${e.id} > ${stream.deliveredThrough}`;
  }
  return db
    .select()
    .from(e)
    .where(and(mine, after, sql`${e.txId} < pg_snapshot_xmin(pg_current_snapshot())`))
    .orderBy(e.txId, e.id)
    .limit(limit);
}

/** What one attempt changes on the stream row. */
export interface StreamAttemptUpdate {
  /** The new cursor (the last event delivered), when the batch was delivered. */
  deliveredThrough?: string;
  attempts: number;
  state: AuditLogStreamRow['state'];
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/**
 * Records an attempt on a leased stream. Guarded by the cursor the batch was read after, and by
 * the stream still being active: a stream the IT admin changed or paused meanwhile is left as
 * they set it. Returns whether the row was updated.
 */
export async function recordStreamAttempt(
  db: Db,
  stream: Pick<AuditLogStreamRow, 'id' | 'environmentId' | 'deliveredThrough'>,
  update: StreamAttemptUpdate,
  now: Date,
): Promise<boolean> {
  const s = auditLogStreams;
  const rows = await db
    .update(s)
    .set({ ...update, updatedAt: now })
    .where(
      and(
        eq(s.environmentId, stream.environmentId),
        eq(s.id, stream.id),
        eq(s.state, 'active'),
        stream.deliveredThrough === null ? isNull(s.deliveredThrough) : eq(s.deliveredThrough, stream.deliveredThrough),
      ),
    )
    .returning({ id: s.id });
  return rows.length > 0;
}

/** Sets a leased stream's next look (nothing to deliver now), leaving its attempt state alone. */
export async function releaseStream(
  db: Db,
  stream: Pick<AuditLogStreamRow, 'id' | 'environmentId'>,
  at: Date,
): Promise<void> {
  const s = auditLogStreams;
  await db
    .update(s)
    .set({ nextAttemptAt: at })
    .where(and(eq(s.environmentId, stream.environmentId), eq(s.id, stream.id), eq(s.state, 'active')));
}
