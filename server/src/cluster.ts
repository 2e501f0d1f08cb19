import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import type { Logger } from 'pino';
import { banner } from './banner.ts';
import type { ServerConfig } from './config.ts';
import {
  createDeps,
  exitOnStartFailure,
  type FirstRun,
  firstRunSecrets,
  openConfiguredDb,
  prepareDatabase,
} from './runtime.ts';

/** How long a crashed API process waits before it is started again (a crash loop stays cheap). */
const RESTART_DELAY_MS = 1_000;

/**
 * `ATRIUM_PROCESSES=N` (N > 1): this primary applies the migrations and prepares the database
 * once, then forks N API processes that share the one port through node:cluster (the primary accepts
 * connections and hands them out round-robin). Only the first runs the background workers
 * (`ATRIUM_WORKERS`); any number may, since their jobs are leased, but one is enough per host.
 * Once every one listens, the primary makes the first-run secrets (so a port in use burns none)
 * and prints the banner. A process that dies is started again; SIGTERM/SIGINT drain every
 * process, then the primary exits.
 * Everything shared between them (rate limits, cache invalidation, idempotency keys) lives in
 * PostgreSQL, so PGlite, which one process owns, is refused.
 */
export async function runPrimary(config: ServerConfig, log: Logger): Promise<void> {
  if (!config.databaseUrl) {
    log.fatal('ATRIUM_PROCESSES > 1 needs DATABASE_URL: the embedded PGlite database belongs to one process.');
    process.exit(1);
  }
  // Kept open (two connections) until the banner: the first-run secrets are made once all listen.
  let handle: Awaited<ReturnType<typeof openConfiguredDb>> | undefined;
  let deps: ReturnType<typeof createDeps>;
  try {
    handle = await openConfiguredDb({ ...config, dbPoolSize: 2, dbStatementConnections: 1 }, log);
    if (config.migrate) await handle.migrate();
    deps = createDeps(handle, config, log);
    await prepareDatabase(deps, config, log);
  } catch (error) {
    await handle?.close().catch(() => {});
    exitOnStartFailure(log, error);
  }
  const setUp = handle;
  const announce = async (url: string) => {
    let firstRun: FirstRun;
    try {
      firstRun = await firstRunSecrets(deps, config);
    } catch (error) {
      log.fatal({ err: error }, `Atrium could not start: ${error instanceof Error ? error.message : String(error)}`);
      stopAll(1);
      return;
    } finally {
      await setUp.close().catch(() => {});
    }
    process.stdout.write(banner(config, url, firstRun, config.processes));
  };

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
        void announce(message.url ?? config.publicUrl);
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
      stopAll(1);
      return;
    }
    listened.delete(child);
    log.error({ pid: child.process.pid, code, signal, index }, 'an API process exited; starting another');
    // Not unref()ed: with every API process gone, this timer keeps the primary alive to restart them.
    if (index !== undefined) setTimeout(() => fork(index), RESTART_DELAY_MS);
  });

  function stopAll(code: number) {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const other of children.keys()) other.process.kill('SIGTERM');
    if (children.size === 0) process.exit(code);
    setTimeout(() => process.exit(code), config.shutdownDrainMs + 10_000).unref();
  }

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
