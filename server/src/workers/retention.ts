import {
  type Deps,
  purgeExpiredAuditLogExports,
  purgeExpiredAuditLogs,
  purgeExpiredIdempotencyKeys,
  purgeExpiredRecords,
  purgeExpiredSessions,
  purgeIdleRateLimitWindows,
  sweepSso,
} from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * One retention sweep: idempotency keys older than 24 h, sessions long past their expiry, shared
 * rate-limit counters an hour past their window (`rateLimitWindowMs`, the configured window),
 * the short-lived rows (portal links and sessions, console sessions, session challenges) a
 * day past their expiry, the SSO rows (routers/src/sso/service.ts `sweepSso`), and audit log
 * events older than their organization's retention (365 days unless set), and audit log exports
 * a day after they finished, with their CSV parts. Logs and returns how many of each went.
 */
export async function retentionSweep(deps: Deps, rateLimitWindowMs = 60_000): Promise<Record<string, number>> {
  const purged: Record<string, number> = {
    idempotency_keys: await purgeExpiredIdempotencyKeys(deps),
    sessions: await purgeExpiredSessions(deps.db, deps.now()),
    rate_limit_windows: await purgeIdleRateLimitWindows(deps, rateLimitWindowMs),
    audit_log_events: await purgeExpiredAuditLogs(deps),
    audit_log_exports: await purgeExpiredAuditLogExports(deps),
  };
  Object.assign(purged, await purgeExpiredRecords(deps));
  // Single sign-on: expired authorizations time out (authentication.sso_timed_out); codes,
  // access tokens and SAML assertion ids past expiry, and old finished authorizations, go.
  Object.assign(purged, await sweepSso(deps));
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
