import { openDb } from '@atrium/db';
import { loadConfig } from './config.ts';
import { createDeps, createLogger, startWorkers } from './runtime.ts';

/**
 * `npm run worker`: the DNS verification and webhook delivery workers without the HTTP
 * server, for deployments that run them apart (several may share one PostgreSQL).
 */
const config = loadConfig();
const log = createLogger(config.logLevel);
if (!config.databaseUrl) {
  log.warn('no DATABASE_URL: the worker opens the PGlite data directory, which the server must not have open');
}
const handle = await openDb({
  databaseUrl: config.databaseUrl,
  dataDir: config.dataDir,
  poolSize: config.dbPoolSize,
  statementConnections: config.dbStatementConnections,
  connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
  statementTimeoutMs: config.dbStatementTimeoutMs,
  prepare: config.dbPrepare,
  warn: (message) => log.warn(message),
});
await handle.migrate();
const workers = startWorkers(createDeps(handle, config, log), config);
log.info({ dnsServers: config.dnsServers }, 'Atrium workers started');

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
