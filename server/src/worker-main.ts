import { loadConfigOrExit } from './config.ts';
import { createDeps, createLogger, openConfiguredDb, startWorkers } from './runtime.ts';

/**
 * `npm run worker`: the DNS verification and webhook delivery workers without the HTTP
 * server, for deployments that run them apart: any number may share one PostgreSQL, since each
 * DNS check and webhook delivery is leased (`FOR UPDATE SKIP LOCKED`) by the one that takes it.
 */
const config = loadConfigOrExit({ needsMasterKey: true });
const log = createLogger(config.logLevel, undefined, config.logFormat);
if (!config.databaseUrl) {
  log.warn('no DATABASE_URL: the worker opens the PGlite data directory, which the server must not have open');
}
const handle = await openConfiguredDb(config, log);
if (config.migrate) await handle.migrate();
const workers = startWorkers(createDeps(handle, config, log), config);
let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'stopping workers');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    Promise.all(workers.map((worker) => worker.stop()))
      .then(() => handle.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
// Announced once the stop handlers are in: a supervisor that heard it may stop us at once.
log.info({ dnsServers: config.dnsServers }, 'Atrium workers started');
