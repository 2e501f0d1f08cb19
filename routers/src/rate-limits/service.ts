import type { Deps } from '../kernel/deps.ts';
import { consumeWindow, purgeWindowsBefore } from './store.ts';

/** A count in a shared window: points used in it so far, and milliseconds until it ends. */
export interface SharedCount {
  used: number;
  msLeft: number;
}

/**
 * Counts `points` against `bucket` in PostgreSQL, shared by every process on the database
 * (fixed windows of `windowMs` on the database's clock). One upsert per call.
 */
export function consumeSharedWindow(
  deps: Deps,
  bucket: string,
  points: number,
  windowMs: number,
): Promise<SharedCount> {
  return consumeWindow(deps.db, bucket, points, windowMs);
}

/** Gives back `points` counted against `bucket` in its current window (an attempt that turned out fine). */
export async function refundSharedWindow(deps: Deps, bucket: string, points: number, windowMs: number): Promise<void> {
  await consumeWindow(deps.db, bucket, -points, windowMs);
}

/** Forgets counters idle for an hour past their window (revoked keys, retired tokens). */
export function purgeIdleRateLimitWindows(deps: Deps, longestWindowMs: number): Promise<number> {
  return purgeWindowsBefore(deps.db, deps.now().getTime() - longestWindowMs - 60 * 60 * 1000);
}
