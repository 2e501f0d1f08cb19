import { buildNextAuditLogExport, type Deps } from '@atrium/routers';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * Builds pending audit log exports (routers/src/audit-logs/exports/service.ts), one per tick, at
 * once again while there are more, else every `intervalMs` (default 2 s). Leases keep two
 * workers (two processes) off one export.
 */
export function auditLogExportsWorker(deps: Deps, intervalMs = 2_000): Worker {
  const loop = new TickLoop(
    () => buildNextAuditLogExport(deps),
    intervalMs,
    (error) => deps.log.warn({ err: error }, 'audit log export tick failed'),
  );
  loop.start();
  return { name: 'audit-log-exports', stop: () => loop.stop() };
}
