import { type Deps, purgeExpiredIdempotencyKeys, purgeExpiredSessions } from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * The retention sweep, every `intervalMs` (default: every 10 minutes, the first one interval
 * after start): idempotency keys older than 24 h, and sessions long past their expiry.
 */
export function retentionWorker(deps: Deps, intervalMs = 10 * 60 * 1000): Worker {
  const loop = new TickLoop(
    async () => {
      const keys = await purgeExpiredIdempotencyKeys(deps);
      const sessions = await purgeExpiredSessions(deps.db, deps.now());
      if (keys + sessions > 0) deps.log.info({ idempotency_keys: keys, sessions }, 'expired records purged');
      return false;
    },
    intervalMs,
    (error) => deps.log.warn({ err: error }, 'retention sweep failed'),
  );
  loop.start(intervalMs);
  return { name: 'retention', stop: () => loop.stop() };
}
