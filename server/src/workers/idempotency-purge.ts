import { type Deps, purgeExpiredIdempotencyKeys } from '@atrium/routers';
import { intervalWorker, type Worker } from './worker.ts';

/** Deletes idempotency keys older than 24 h, every `intervalMs` (default: every 10 minutes). */
export function idempotencyPurgeWorker(deps: Deps, intervalMs = 10 * 60 * 1000): Worker {
  return intervalWorker(
    'idempotency-purge',
    intervalMs,
    async () => {
      const purged = await purgeExpiredIdempotencyKeys(deps);
      if (purged > 0) deps.log.info({ purged }, 'expired idempotency keys purged');
    },
    (error) => deps.log.warn({ err: error }, 'idempotency purge failed'),
  );
}
