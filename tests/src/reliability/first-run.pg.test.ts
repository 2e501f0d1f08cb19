import { randomBytes } from 'node:crypto';
import { adminTokens, type DbHandle, environments, openDb } from '@atrium/db';
import { createFirstRunSecrets, DEFAULT_TOKEN_SETTINGS, type Deps, newCaches } from '@atrium/routers';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDatabase } from '../helpers/scratch-database.ts';
import { freePort, killSpawnedServers, spawnServer } from '../helpers/spawn-server.ts';

/**
 * Processes starting together on one empty PostgreSQL database (compose's api-1 and api-2):
 * one admin token, one `development` environment, and exactly one of them prints the secrets.
 * PostgreSQL only: PGlite belongs to one process.
 */
const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('first-run secrets under concurrent starts (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof scratchDatabase>>;
  const handles: DbHandle[] = [];

  beforeAll(async () => {
    database = await scratchDatabase(databaseUrl as string, 'firstrun');
  });
  afterAll(async () => {
    killSpawnedServers();
    await Promise.all(handles.map((h) => h.close().catch(() => {})));
    await database?.drop();
  });

  function depsOn(handle: DbHandle): Deps {
    return {
      db: handle.db,
      driver: handle.driver,
      now: () => new Date(),
      log: pino({ level: 'silent' }),
      config: { apiKeyCacheTtlMs: 0 },
      tokens: { ...DEFAULT_TOKEN_SETTINGS, masterKey: randomBytes(32), issuer: 'http://127.0.0.1' },
      caches: newCaches(),
    };
  }

  it('four processes at once, three times over: one token, one environment, one winner', async () => {
    for (let i = 0; i < 4; i++) handles.push(await openDb({ databaseUrl: database.url, poolSize: 2 }));
    await handles[0]?.migrate();
    const db = (handles[0] as DbHandle).db;
    for (let round = 0; round < 3; round++) {
      await db.delete(environments);
      await db.delete(adminTokens);
      const results = await Promise.all(
        handles.map((handle) => createFirstRunSecrets(depsOn(handle), { generateAdminToken: true })),
      );
      expect(results.filter((r) => r.adminToken !== undefined)).toHaveLength(1);
      expect(results.filter((r) => r.environment !== undefined)).toHaveLength(1);
      // The same process got both.
      expect(results.filter((r) => r.adminToken && r.environment)).toHaveLength(1);
      expect((await db.select().from(environments)).map((e) => e.name)).toEqual(['development']);
      expect(await db.select().from(adminTokens)).toHaveLength(1);
    }
  }, 60_000);

  it('two servers starting on one empty database: one development, secrets printed by exactly one', async () => {
    const fresh = await scratchDatabase(databaseUrl as string, 'firstrun2');
    try {
      const env = { DATABASE_URL: fresh.url, ATRIUM_MASTER_KEY: randomBytes(32).toString('base64') };
      const [a, b] = await Promise.all([spawnServer(env, await freePort()), spawnServer(env, await freePort())]);
      const banners = [a.output(), b.output()];
      expect(banners.filter((out) => /export WORKOS_API_KEY=sk_test_\w{40}/.test(out))).toHaveLength(1);
      expect(banners.filter((out) => /export ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}/.test(out))).toHaveLength(1);
      const check = await openDb({ databaseUrl: fresh.url, poolSize: 1 });
      handles.push(check);
      expect((await check.db.select().from(environments)).map((e) => e.name)).toEqual(['development']);
      expect(await check.db.select().from(adminTokens)).toHaveLength(1);
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
      await check.close();
      handles.pop();
    } finally {
      await fresh.drop();
    }
  }, 120_000);
});
