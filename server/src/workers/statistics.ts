import type { DbHandle } from '@atrium/db';
import type { Logger } from 'pino';
import { TickLoop } from './loop.ts';
import type { Worker } from './worker.ts';

/**
 * One statistics check (db/src/statistics.ts): where nothing else analyzes (PGlite, or
 * PostgreSQL with autovacuum off), ANALYZE the tables that changed past autovacuum's threshold
 * since their last analyze. One cheap catalog read when nothing changed. Returns the analyzed tables.
 */
export async function statisticsCheck(handle: Pick<DbHandle, 'refreshStatistics'>, log?: Logger): Promise<string[]> {
  const analyzed = await handle.refreshStatistics();
  if (analyzed.length > 0) log?.debug({ tables: analyzed }, 'statistics refreshed');
  return analyzed;
}

/** The statistics check every `intervalMs` (`ATRIUM_STATISTICS_CHECK_SECONDS`), the first one interval after start. */
export function statisticsWorker(handle: Pick<DbHandle, 'refreshStatistics'>, log: Logger, intervalMs: number): Worker {
  const loop = new TickLoop(
    async () => {
      await statisticsCheck(handle, log);
      return false;
    },
    intervalMs,
    (error) => log.warn({ err: error }, 'statistics check failed'),
  );
  loop.start(intervalMs);
  return { name: 'statistics', stop: () => loop.stop() };
}
