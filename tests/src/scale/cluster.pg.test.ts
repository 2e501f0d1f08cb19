import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createAdminClient } from '@atrium/server';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDatabase } from '../helpers/scratch-database.ts';
import { freePort, killSpawnedServers, type SpawnedServer, spawnEntry, spawnServer } from '../helpers/spawn-server.ts';
import { HttpClient } from '../helpers/world.ts';
import { adminTokenFor } from '../reliability/own-app.ts';

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return tasks === '' ? [] : tasks.split(/\s+/).map(Number);
}

/**
 * `ATRIUM_PROCESSES=2`: one port, two API processes under node:cluster, the primary having
 * migrated and prepared the database once. The rate limit holds across both, and SIGTERM
 * drains both and exits 0. PostgreSQL only: PGlite belongs to one process.
 */
const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('ATRIUM_PROCESSES=2 (PostgreSQL only: PGlite is one process’s database)', () => {
  const token = adminTokenFor('cluster');
  let database: Awaited<ReturnType<typeof scratchDatabase>>;
  let server: SpawnedServer;

  beforeAll(async () => {
    database = await scratchDatabase(databaseUrl as string, 'cluster');
    server = await spawnServer(
      {
        DATABASE_URL: database.url,
        ATRIUM_MASTER_KEY: randomBytes(32).toString('base64'),
        ATRIUM_ADMIN_TOKEN: token,
        ATRIUM_PROCESSES: '2',
        RATE_LIMIT: 'on',
        RATE_LIMIT_REQUESTS: '30',
        RATE_LIMIT_WINDOW_SECONDS: '3600',
      },
      await freePort(),
    );
  }, 120_000);

  afterAll(async () => {
    killSpawnedServers();
    await database?.drop();
  });

  it('runs two API processes on one port, the rate limit holding across them', async () => {
    expect(server.output()).toContain('2 processes');
    const children = childrenOf(server.child.pid as number);
    expect(children).toHaveLength(2);
    const created = await createAdminClient(server.url, token).environments.create.mutate({
      name: `cluster-${randomUUID()}`,
    });
    // A new connection per request (Connection: close), so the primary hands them out to both.
    const client = new HttpClient(server.url, { Authorization: `Bearer ${created.api_key}`, Connection: 'close' });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await client.get('/organizations?limit=1')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
  });

  it('starts another API process when one dies, and keeps answering meanwhile', async () => {
    const [victim, survivor] = childrenOf(server.child.pid as number);
    process.kill(victim as number, 'SIGKILL');
    const started = Date.now();
    for (;;) {
      const now = childrenOf(server.child.pid as number);
      if (now.length === 2 && !now.includes(victim as number) && now.includes(survivor as number)) break;
      if (Date.now() - started > 30_000) throw new Error(`no replacement: ${now.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The replacement answers too: enough fresh connections reach both processes.
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${server.url}/healthz`, { headers: { Connection: 'close' } });
      expect(res.status).toBe(200);
    }
  });

  it('drains both processes on SIGTERM and exits 0', async () => {
    const children = childrenOf(server.child.pid as number);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    for (const pid of children) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe.skipIf(!databaseUrl)('ATRIUM_PROCESSES=2 on a port in use (PostgreSQL only)', () => {
  it('makes no first-run secret until every process listens; the next start prints them', async () => {
    const fresh = await scratchDatabase(databaseUrl as string, 'clusterbusy');
    const holder = createServer();
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
      const env = {
        DATABASE_URL: fresh.url,
        ATRIUM_MASTER_KEY: randomBytes(32).toString('base64'),
        ATRIUM_PROCESSES: '2',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      };
      const busy = await spawnEntry('server/src/main.ts', env, undefined);
      expect((await busy.exited).code).toBe(1);
      expect(busy.output()).toContain(`Atrium could not start: port ${port} on 127.0.0.1 is in use`);
      expect(busy.output()).not.toMatch(/atrium_admin_\w{40}|sk_test_\w{40}/);
      const sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await sql<{ environments: number; tokens: number }[]>`
          select (select count(*)::int from environments) as environments,
                 (select count(*)::int from admin_tokens) as tokens`;
        expect(row).toEqual({ environments: 0, tokens: 0 });
      } finally {
        await sql.end({ timeout: 5 });
      }
      holder.close();

      const next = await spawnServer(env, await freePort());
      expect(next.output()).toMatch(/export ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}\n/);
      expect(next.output()).toMatch(/export WORKOS_API_KEY=sk_test_\w{40}\n/);
      next.child.kill('SIGTERM');
      expect((await next.exited).code).toBe(0);
    } finally {
      holder.close();
      await fresh.drop();
    }
  }, 120_000);
});
