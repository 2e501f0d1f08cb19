import {
  type Deps,
  purgeExpiredIdempotencyKeys,
  purgeExpiredSessions,
  purgeIdleRateLimitWindows,
} from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * The retention sweep, every `intervalMs` (default: every 10 minutes, the first one interval
 * after start): idempotency keys older than 24 h, sessions long past their expiry, and shared
 * rate-limit counters an hour past their window (`rateLimitWindowMs`, the configured window).
 */
export function retentionWorker(deps: Deps, intervalMs = 10 * 60 * 1000, rateLimitWindowMs = 60_000): Worker {
  const loop = new TickLoop(
    async () => {
      const keys = await purgeExpiredIdempotencyKeys(deps);
      const sessions = await purgeExpiredSessions(deps.db, deps.now());
      const windows = await purgeIdleRateLimitWindows(deps, rateLimitWindowMs);
      if (keys + sessions + windows > 0) {
        deps.log.info({ idempotency_keys: keys, sessions, rate_limit_windows: windows }, 'expired records purged');
      }
      return false;
    },
    intervalMs,
    (error) => deps.log.warn({ err: error }, 'retention sweep failed'),
  );
  loop.start(intervalMs);
  return { name: 'retention', stop: () => loop.stop() };
}
