import { randomBytes } from 'node:crypto';
import { type DbHandle, openDb } from '@atrium/db';
import { createEnvironment, DEFAULT_TOKEN_SETTINGS, type Deps, ensureAdminToken, newCaches } from '@atrium/routers';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OwnPostgres } from '../helpers/own-postgres.ts';
import { HttpClient, type HttpResponse } from '../helpers/world.ts';
import { adminTokenFor, startOwnApp } from './own-app.ts';

/**
 * The database going away and coming back, on a PostgreSQL cluster this test owns. PGlite is
 * embedded in the process (it cannot go away on its own), so this suite runs on PostgreSQL
 * runs only (DATABASE_URL set); on PGlite it is skipped.
 */
const onPostgres = Boolean(inject('databaseUrl'));

const faultStats = { requests: 0, faults: 0, fiveHundreds: 0 };

describe.skipIf(!onPostgres)('database faults (PostgreSQL only: PGlite is in-process and cannot be stopped)', () => {
  let pg: OwnPostgres;
  let handle: DbHandle;
  let deps: Deps;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let api: HttpClient;
  let admin: HttpClient;

  beforeAll(async () => {
    pg = await OwnPostgres.create();
    handle = await openDb({ databaseUrl: pg.url, poolSize: 4, connectTimeoutSeconds: 2, statementTimeoutMs: 2_000 });
    await handle.migrate();
    deps = {
      db: handle.db,
      driver: handle.driver,
      now: () => new Date(),
      log: pino({ level: 'silent' }),
      // No API-key cache: every request goes to the database.
      config: { apiKeyCacheTtlMs: 0, requestTimeoutMs: 4_000 },
      tokens: { ...DEFAULT_TOKEN_SETTINGS, masterKey: randomBytes(32), issuer: 'http://127.0.0.1' },
      caches: newCaches(),
    };
    const env = await createEnvironment(deps, { name: 'faults' });
    const token = adminTokenFor('faults');
    await ensureAdminToken(deps, token);
    own = await startOwnApp(deps, { rateLimit: false });
    api = new HttpClient(own.url, { Authorization: `Bearer ${env.api_key}` });
    admin = new HttpClient(own.url, { Authorization: `Bearer ${token}` });
  }, 60_000);

  afterAll(async () => {
    console.info(
      `[reliability] faults: ${faultStats.faults} faults injected, ${faultStats.requests} requests, ${faultStats.fiveHundreds} 500s`,
    );
    await own?.close();
    await handle?.close().catch(() => {});
    pg?.destroy();
  });

  async function timed(request: Promise<HttpResponse>) {
    const started = Date.now();
    const res = await request;
    faultStats.requests += 1;
    if (res.status === 500) faultStats.fiveHundreds += 1;
    return { res, ms: Date.now() - started };
  }

  it('answers 503 service_unavailable quickly while the database is down, and recovers on its own', async () => {
    const created = await api.post('/organizations', { name: 'Before' });
    expect(created.status).toBe(201);

    pg.stop('fast');
    faultStats.faults += 1;
    const down = await Promise.all([
      timed(api.get(`/organizations/${created.body.id}`)),
      timed(api.get('/organizations')),
      timed(api.post('/organizations', { name: 'While down' }, { 'Idempotency-Key': 'down-1' })),
      timed(api.put(`/organizations/${created.body.id}`, { name: 'Renamed while down' })),
    ]);
    for (const { res, ms } of down) {
      expect(res.status, res.text).toBe(503);
      expect(res.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
      expect(res.text).not.toMatch(/ECONNREFUSED|postgres|select|insert/i);
      // Bounded by the connect timeout (2 s) plus slack, never hanging.
      expect(ms).toBeLessThan(6_000);
    }
    const ready = await timed(api.get('/readyz'));
    expect(ready.res.status).toBe(503);
    const metrics = await admin.get('/metrics');
    // The admin token check needs the database too: 503, not a hang.
    expect([200, 503]).toContain(metrics.status);

    pg.start();
    let recovered: HttpResponse | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      const res = (await timed(api.get(`/organizations/${created.body.id}`))).res;
      if (res.status === 200) {
        recovered = res;
        break;
      }
      expect(res.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(recovered?.body.name).toBe('Before');
    // Nothing refused while down was half-written.
    const list = await api.get('/organizations?limit=100');
    expect(list.body.data.map((o: { name: string }) => o.name)).toEqual(['Before']);
    // A key first used while the database was down is free: its retry runs.
    const retried = await api.post('/organizations', { name: 'While down' }, { 'Idempotency-Key': 'down-1' });
    expect(retried.status).toBe(201);
  });

  it('answers 503 when a statement runs past the statement timeout (a row lock held elsewhere)', async () => {
    const created = await api.post('/organizations', { name: 'Locked' });
    expect(created.status).toBe(201);
    const blocker = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const held = blocker.begin(async (sql) => {
        await sql`select id from organizations where id = ${created.body.id} for update`;
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { res, ms } = await timed(api.put(`/organizations/${created.body.id}`, { name: 'Waited' }));
      faultStats.faults += 1;
      expect(res.status, res.text).toBe(503);
      expect(res.body.code).toBe('service_unavailable');
      expect(ms).toBeLessThan(3_000);
      await held;
      // Nothing of the timed-out update was kept; the next one goes through.
      expect((await api.get(`/organizations/${created.body.id}`)).body.name).toBe('Locked');
      expect((await api.put(`/organizations/${created.body.id}`, { name: 'Later' })).status).toBe(200);
    } finally {
      await blocker.end({ timeout: 5 });
    }
  });

  it('keeps every acknowledged write when the database is stopped in the middle of a load', async () => {
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    const load = Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const { res } = await timed(
          api.post('/organizations', {
            name: `Load ${i}`,
            domain_data: [{ domain: `load-${i}-${Date.now()}.com`, state: 'pending' }],
          }),
        );
        statuses.push(res.status);
        if (res.status === 201) acknowledged.push(res.body.id);
      }),
    );
    // Stop while requests are in flight (no sleep: right after they were sent).
    await new Promise((resolve) => setImmediate(resolve));
    pg.stop('fast');
    faultStats.faults += 1;
    await load;
    pg.start();
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    for (let attempt = 0; attempt < 50; attempt++) {
      if ((await api.get('/organizations')).status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const id of acknowledged) {
      const res = await api.get(`/organizations/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.domains).toHaveLength(1);
    }
    // No organization without the domains of its domain_data.
    const all = await api.get('/organizations?limit=100');
    for (const org of all.body.data.filter((o: { name: string }) => o.name.startsWith('Load '))) {
      expect(org.domains).toHaveLength(1);
    }
  });
});
