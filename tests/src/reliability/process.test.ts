import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdminClient } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDatabase } from '../helpers/scratch-database.ts';
import { freePort, killSpawnedServers, type SpawnedServer, spawnEntry, spawnServer } from '../helpers/spawn-server.ts';
import { HttpClient } from '../helpers/world.ts';
import { adminTokenFor } from './own-app.ts';

/**
 * The real server process: SIGTERM drains in-flight requests and exits 0; SIGKILL in the
 * middle of a write load loses no acknowledged write and leaves no half-written record. On a
 * PostgreSQL run the server gets a database of its own (it retires every other admin token at
 * start); on PGlite, a data directory of its own.
 */
const databaseUrl = inject('databaseUrl');
const LOAD = Number(process.env.CRASH_LOAD ?? 60);

const processStats = { requests: 0, kills: 0, terms: 0, fiveXx: 0 };
// Each test below has 90 s: it starts real server processes (two for the SIGKILL one: the crash,
// then the recovery), which on PGlite open their data directory each time: 15-30 s when CI runs
// the two storages side by side on two cores, against vitest's 30 s default.

describe('server process', () => {
  let dir: string;
  const token = adminTokenFor('process');

  let database: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'atrium-process-'));
    if (databaseUrl) database = await scratchDatabase(databaseUrl, 'process');
  });
  afterAll(async () => {
    killSpawnedServers();
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
    console.info(
      `[reliability] process: ${processStats.requests} requests, ${processStats.terms} SIGTERM, ${processStats.kills} SIGKILL, ${processStats.fiveXx} 5xx`,
    );
  });

  const masterKey = randomBytes(32).toString('base64');

  function serverEnv(dataDir: string): Record<string, string> {
    const env: Record<string, string> = {
      ATRIUM_ADMIN_TOKEN: token,
      ATRIUM_DATA_DIR: dataDir,
      SHUTDOWN_DRAIN_MS: '5000',
    };
    // PostgreSQL deployments must name the master key that encrypts signing keys.
    if (database) Object.assign(env, { DATABASE_URL: database.url, ATRIUM_MASTER_KEY: masterKey });
    return env;
  }

  async function start(dataDir: string): Promise<SpawnedServer> {
    return spawnServer(serverEnv(dataDir), await freePort());
  }

  async function apiKeyOf(server: SpawnedServer): Promise<string> {
    const created = await createAdminClient(server.url, token).environments.create.mutate({
      name: `proc-${Date.now()}`,
    });
    return created.api_key;
  }

  function post(api: HttpClient, i: number, tag: string) {
    return api
      .post('/organizations', {
        name: `${tag} ${i}`,
        domain_data: [{ domain: `${tag}-${i}-${Date.now()}.com`, state: 'pending' }],
      })
      .then(
        (res) => {
          processStats.requests += 1;
          if (res.status >= 500) processStats.fiveXx += 1;
          return res;
        },
        (error: unknown) => ({ status: 0, error }) as const,
      );
  }

  it('stops cleanly on a SIGTERM sent the instant it says it listens', async () => {
    // A supervisor that stops the server as soon as it reads the banner: the stop handlers must
    // already be in (stdout to a pipe is written synchronously, before the next line runs).
    const port = await freePort();
    const env = {
      LOG_LEVEL: 'warn',
      RATE_LIMIT: 'off',
      ...serverEnv(join(dir, 'instant')),
      PORT: String(port),
      HOST: '127.0.0.1',
    };
    const server = await spawnEntry('server/src/main.ts', env, undefined);
    let heard = '';
    server.child.stdout?.on('data', (chunk: Buffer) => {
      heard += chunk.toString();
      if (heard.includes('Atrium is listening on') && server.child.signalCode === null && !server.child.killed) {
        server.child.kill('SIGTERM');
        processStats.terms += 1;
      }
    });
    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
    expect(heard).toContain(`Atrium is listening on http://127.0.0.1:${port}`);
  }, 90_000);

  it('drains in-flight requests on SIGTERM, stops, and exits 0', async () => {
    const data = join(dir, 'term');
    const server = await start(data);
    const api = new HttpClient(server.url, { Authorization: `Bearer ${await apiKeyOf(server)}` });
    let signalled = false;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(api, i, 'term').then((res) => {
          if (!signalled) {
            signalled = true;
            server.child.kill('SIGTERM');
            processStats.terms += 1;
          }
          return res;
        }),
      ),
    );
    const { code, signal } = await server.exited;
    expect(signal).toBeNull();
    expect(code).toBe(0);
    // Every request either completed (201) or was never accepted (connection refused/closed).
    expect(results.filter((r) => r.status !== 201 && r.status !== 0)).toEqual([]);
    const acknowledged = results.filter((r) => r.status === 201).map((r) => (r as { body: { id: string } }).body.id);
    // The first answer triggered SIGTERM; the requests already in flight then were still answered.
    expect(acknowledged.length).toBeGreaterThan(1);
    // Refuses new connections once stopped.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

    const again = await start(data);
    try {
      const api2 = new HttpClient(again.url, api.defaultHeaders);
      for (const id of acknowledged) expect((await api2.get(`/organizations/${id}`)).status).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 90_000);

  it(`keeps every acknowledged write after SIGKILL in the middle of ${LOAD} concurrent creates`, async () => {
    const data = join(dir, 'kill');
    const server = await start(data);
    const apiKey = await apiKeyOf(server);
    const api = new HttpClient(server.url, { Authorization: `Bearer ${apiKey}` });
    const acknowledged: Array<{ id: string; domain: string }> = [];
    let done = 0;
    const results = await Promise.all(
      Array.from({ length: LOAD }, (_, i) =>
        post(api, i, 'crash').then((res) => {
          done += 1;
          if (res.status === 201) {
            const body = (res as { body: { id: string; domains: Array<{ domain: string }> } }).body;
            acknowledged.push({ id: body.id, domain: body.domains[0]!.domain });
          }
          if (done === Math.floor(LOAD / 3)) {
            server.child.kill('SIGKILL');
            processStats.kills += 1;
          }
          return res;
        }),
      ),
    );
    const { signal } = await server.exited;
    expect(signal).toBe('SIGKILL');
    expect(results.filter((r) => r.status !== 201 && r.status !== 0)).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(Math.floor(LOAD / 3));

    const again = await start(data);
    try {
      const api2 = new HttpClient(again.url, { Authorization: `Bearer ${apiKey}` });
      for (const { id, domain } of acknowledged) {
        const res = await api2.get(`/organizations/${id}`);
        expect(res.status).toBe(200);
        expect(res.body.domains.map((d: { domain: string }) => d.domain)).toEqual([domain]);
      }
      // No half-written record: every organization that exists has the domain of its domain_data.
      const all = await api2.get('/organizations?limit=100');
      expect(all.status).toBe(200);
      for (const org of all.body.data) expect(org.domains).toHaveLength(1);
      expect(all.body.data.length).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 90_000);
});
