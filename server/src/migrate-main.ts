import { loadConfigOrExit } from './config.ts';
import { createLogger, openConfiguredDb } from './runtime.ts';

/**
 * `npm run migrate`: applies the committed migrations once and exits (0 when the schema is
 * current). Run it as the release step of an upgrade, before the new processes start with
 * `ATRIUM_MIGRATE=false`. Concurrent runs are serialised by an advisory lock (db/src/client.ts).
 */
const config = loadConfigOrExit({ needsMasterKey: false });
const log = createLogger(config.logLevel, undefined, config.logFormat);
try {
  const handle = await openConfiguredDb(config, log);
  try {
    await handle.migrate();
  } finally {
    await handle.close();
  }
  log.info('migrations applied');
  process.stdout.write('Migrations applied.\n');
} catch (error) {
  log.fatal({ err: error }, `migrations failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
