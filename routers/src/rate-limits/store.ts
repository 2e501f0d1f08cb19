import { type Db, rateLimitWindows, renderedOnce } from '@atrium/db';
import { lt, sql } from 'drizzle-orm';

/** Every query of the shared rate-limit counters; the facade's limits step calls them through service.ts. */

/**
 * One upsert per count: the bucket's window is the current fixed window of the database's clock
 * (`window_ms`-aligned), so every process counts into the same one; a row of an older window
 * starts over. Answers the points used in the window, and milliseconds until it ends. Negative
 * points give back what a caller counted (never below zero).
 */
const consume = renderedOnce(['bucket', 'points', 'windowMs'] as const, (v) => {
  const nowMs = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
  const start = sql`(${nowMs} / ${v.windowMs}::bigint) * ${v.windowMs}::bigint`;
  return sql`insert into ${rateLimitWindows} as w (bucket, window_start, used)
    values (${v.bucket}, ${start}, ${v.points}::int)
    on conflict (bucket) do update set
      used = case when w.window_start = excluded.window_start
        then greatest(least(w.used::bigint + excluded.used, 2147483647), 0)::int
        else greatest(excluded.used, 0) end,
      window_start = greatest(w.window_start, excluded.window_start)
    returning used, (window_start + ${v.windowMs}::bigint - ${nowMs})::int as ms_left`;
});

/** Counts `points` against `bucket` in its current window of `windowMs`. */
export async function consumeWindow(
  db: Db,
  bucket: string,
  points: number,
  windowMs: number,
): Promise<{ used: number; msLeft: number }> {
  const [row] = await consume<{ used: number; ms_left: number }>(db, { bucket, points, windowMs });
  if (!row) throw new Error('rate-limit upsert returned no row');
  return { used: Number(row.used), msLeft: Math.max(0, Number(row.ms_left)) };
}

/** Deletes counters whose window started before `before` (ms since the epoch): keys gone quiet. */
export async function purgeWindowsBefore(db: Db, before: number): Promise<number> {
  const deleted = await db
    .delete(rateLimitWindows)
    .where(lt(rateLimitWindows.windowStart, before))
    .returning({ bucket: rateLimitWindows.bucket });
  return deleted.length;
}
