import {
  type Deps,
  purgeExpiredAuditLogs,
  purgeExpiredIdempotencyKeys,
  purgeExpiredRecords,
  purgeExpiredSessions,
  purgeIdleRateLimitWindows,
} from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * One retention sweep: idempotency keys older than 24 h, sessions long past their expiry, shared
 * rate-limit counters an hour past their window (`rateLimitWindowMs`, the configured window),
 * and the short-lived rows (portal links and sessions, console sessions, session challenges) a
 * day past their expiry, and audit log events older than their organization's retention (365 days
 * unless set). Logs and returns how many of each went.
 */
export async function retentionSweep(deps: Deps, rateLimitWindowMs = 60_000): Promise<Record<string, number>> {
  const purged = {
    idempotency_keys: await purgeExpiredIdempotencyKeys(deps),
    sessions: await purgeExpiredSessions(deps.db, deps.now()),
    rate_limit_windows: await purgeIdleRateLimitWindows(deps, rateLimitWindowMs),
    ...(await purgeExpiredRecords(deps)),
    audit_log_events: await purgeExpiredAuditLogs(deps),
  };
  if (Object.values(purged).some((n) => n > 0)) deps.log.info(purged, 'expired records purged');
  return purged;
}

/** The retention sweep every `intervalMs` (default: every 10 minutes, the first one interval after start). */
export function retentionWorker(deps: Deps, intervalMs = 10 * 60 * 1000, rateLimitWindowMs = 60_000): Worker {
  const loop = new TickLoop(
    async () => {
      await retentionSweep(deps, rateLimitWindowMs);
      return false;
    },
    intervalMs,
    (error) => deps.log.warn({ err: error }, 'retention sweep failed'),
  );
  loop.start(intervalMs);
  return { name: 'retention', stop: () => loop.stop() };
}
