import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import type { Logger } from 'pino';
import { banner } from './banner.ts';
import type { ServerConfig } from './config.ts';
import { createDeps, openConfiguredDb, prepareDatabase } from './runtime.ts';

/** How long a crashed API process waits before it is started again (a crash loop stays cheap). */
const RESTART_DELAY_MS = 1_000;

/**
 * `ATRIUM_PROCESSES=N` (N > 1): this primary applies the migrations and first-run setup once,
 * then forks N API processes that share the one port through node:cluster (the primary accepts
 * connections and hands them out round-robin). Only the first runs the background workers
 * (`ATRIUM_WORKERS`); any number may, since their jobs are leased, but one is enough per host.
 * A process that dies is started again; SIGTERM/SIGINT drain every process, then the primary exits.
 * Everything shared between them (rate limits, cache invalidation, idempotency keys) lives in
 * PostgreSQL, so PGlite, which one process owns, is refused.
 */
export async function runPrimary(config: ServerConfig, log: Logger): Promise<void> {
  if (!config.databaseUrl) {
    log.fatal('ATRIUM_PROCESSES > 1 needs DATABASE_URL: the embedded PGlite database belongs to one process.');
    process.exit(1);
  }
  let firstRun: Awaited<ReturnType<typeof prepareDatabase>>;
  try {
    const handle = await openConfiguredDb({ ...config, dbPoolSize: 2, dbStatementConnections: 1 }, log);
    try {
      if (config.migrate) await handle.migrate();
      firstRun = await prepareDatabase(createDeps(handle, config, log), config, log);
    } finally {
      await handle.close();
    }
  } catch (error) {
    log.fatal({ err: error }, `Atrium could not start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }

  const childEnv = (index: number) => ({
    ATRIUM_MIGRATE: 'false',
    ATRIUM_WORKERS: config.workers && index === 0 ? 'true' : 'false',
    ATRIUM_PROCESS_INDEX: String(index),
  });
  const children = new Map<ClusterWorker, number>();
  let stopping = false;
  let exitCode = 0;
  let listening = 0;
  let announced = false;

  const listened = new Set<ClusterWorker>();
  const fork = (index: number) => {
    const child = cluster.fork(childEnv(index));
    children.set(child, index);
    child.on('message', (message: { atrium?: string; url?: string }) => {
      if (message?.atrium !== 'listening') return;
      listened.add(child);
      if (announced) return;
      listening += 1;
      if (listening === config.processes) {
        announced = true;
        process.stdout.write(banner(config, message.url ?? config.publicUrl, firstRun, config.processes));
      }
    });
  };

  cluster.on('exit', (child, code, signal) => {
    const index = children.get(child);
    children.delete(child);
    if (stopping) {
      if (children.size === 0) process.exit(exitCode);
      return;
    }
    if (!listened.has(child)) {
      // It never listened (a port in use, a bad setting): another would fail the same way.
      log.fatal({ pid: child.process.pid, code, signal, index }, 'an API process failed to start; stopping');
      stopping = true;
      exitCode = 1;
      for (const other of children.keys()) other.process.kill('SIGTERM');
      if (children.size === 0) process.exit(1);
      setTimeout(() => process.exit(1), config.shutdownDrainMs + 10_000).unref();
      return;
    }
    listened.delete(child);
    log.error({ pid: child.process.pid, code, signal, index }, 'an API process exited; starting another');
    // Not unref()ed: with every API process gone, this timer keeps the primary alive to restart them.
    if (index !== undefined) setTimeout(() => fork(index), RESTART_DELAY_MS);
  });

  for (let i = 0; i < config.processes; i++) fork(i);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, processes: children.size }, 'shutting down every API process');
      if (children.size === 0) process.exit(0);
      for (const child of children.keys()) child.process.kill('SIGTERM');
      setTimeout(() => process.exit(1), config.shutdownDrainMs + 10_000).unref();
    });
  }
}
