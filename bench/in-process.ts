// What the benches that run Atrium in their own process share (bench/sso-world.ts,
// bench/audit-export.ts, bench/statement-cost.ts, bench/layers.ts): the database handle, a scratch
// database, and the services' Deps.
import { randomBytes } from 'node:crypto';
import { type DbHandle, openDb } from '@atrium/db';
import { DEFAULT_TOKEN_SETTINGS, type Deps, newCaches } from '@atrium/routers';
import pino from 'pino';
import postgres from 'postgres';

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

/** A database of its own on the PostgreSQL at `serverUrl`, for one run: its URL, and `drop` at the end. */
export async function scratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
