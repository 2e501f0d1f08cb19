// What the benches that run Atrium in their own process share (bench/sso-world.ts,
// bench/audit-export.ts, bench/statement-cost.ts): the database handle and the services' Deps.
import { randomBytes } from 'node:crypto';
import { type DbHandle, openDb } from '@atrium/db';
import { DEFAULT_TOKEN_SETTINGS, type Deps, newCaches } from '@atrium/routers';
import pino from 'pino';

/** The database on `DATABASE_URL` (a pool of 10), else PGlite in memory; migrated. */
export async function openBenchDb(): Promise<DbHandle> {
  const url = process.env.DATABASE_URL;
  const handle = await openDb(url ? { databaseUrl: url, poolSize: 10 } : { dataDir: 'memory://' });
  await handle.migrate();
  return handle;
}

/** The services' dependencies over `handle`: a fresh master key, the default token settings, warn-level logs. */
export function benchDeps(handle: DbHandle, config: Deps['config'], level: 'warn' | 'silent' = 'warn'): Deps {
  return {
    db: handle.db,
    driver: handle.driver,
    now: () => new Date(),
    log: pino({ level }),
    config,
    tokens: Object.assign({}, DEFAULT_TOKEN_SETTINGS, { masterKey: randomBytes(32), issuer: 'http://127.0.0.1' }),
    caches: newCaches(),
  };
}
