import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DbHandle, openDb, ReadReplica } from '@atrium/db';
import {
  createCaller,
  createEnvironment,
  createInnerContext,
  DEFAULT_TOKEN_SETTINGS,
  type Deps,
  ensureAdminToken,
  newCaches,
} from '@atrium/routers';
import { createLogger, loadConfig, startRuntime } from '@atrium/server';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OwnPostgres } from '../helpers/own-postgres.ts';
import { HttpClient, type TestEnvironment } from '../helpers/world.ts';
import { makeFixture, OPERATIONS } from '../reliability/catalog.ts';
import { adminTokenFor, startOwnApp } from '../reliability/own-app.ts';

/**
 * Reads from a real streaming replica: a primary cluster of the test's own (the machine's
 * PostgreSQL 15 binaries) and a replica made of it with `pg_basebackup`, started on another
 * loopback port. The shared server is left alone: a base backup of it would copy every other
 * test run's databases, and would need its replication settings changed.
 */
const onPostgres = Boolean(inject('databaseUrl'));

/** Polls `probe` (each call runs a check or a query, no timers) until it holds, for at most `ms`. */
async function until(probe: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** One sample of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe.skipIf(!onPostgres)(
  'read replica (PostgreSQL only: PGlite streams no WAL, so there is no replica to read from)',
  () => {
    let primary: OwnPostgres;
    let standby: OwnPostgres;
    let handle: DbHandle;
    let replica: ReadReplica;
    let deps: Deps;
    let own: Awaited<ReturnType<typeof startOwnApp>>;
    let onStandby: postgres.Sql;
    let writer: HttpClient;
    let reader: HttpClient;
    let metrics: HttpClient;
    let adminToken: string;
    let environmentId: string;
    let clientId: string;

    beforeAll(async () => {
      primary = await OwnPostgres.create();
      handle = await openDb({ databaseUrl: primary.url, poolSize: 4, connectTimeoutSeconds: 2 });
      await handle.migrate();
      standby = await OwnPostgres.replicaOf(primary);
      // Checked by hand below (`check()`), so the test sees each change without waiting.
      replica = new ReadReplica(handle.db, {
        url: standby.url,
        primaryUrl: primary.url,
        maxLagMs: 60_000,
        checkEveryMs: 60_000,
        connectTimeoutSeconds: 2,
        statementTimeoutMs: 2_000,
      });
      await replica.start();
      deps = {
        db: handle.db,
        driver: handle.driver,
        replica,
        now: () => new Date(),
        log: pino({ level: 'silent' }),
        config: { apiKeyCacheTtlMs: 60_000, requestTimeoutMs: 10_000 },
        tokens: { ...DEFAULT_TOKEN_SETTINGS, masterKey: randomBytes(32), issuer: 'http://127.0.0.1' },
        caches: newCaches(),
      };
      const env = await createEnvironment(deps, { name: 'replica' });
      const token = adminTokenFor('replica');
      await ensureAdminToken(deps, token);
      adminToken = token;
      environmentId = env.environment_id;
      clientId = env.client_id;
      const admin = createCaller(createInnerContext(deps, `Bearer ${token}`)).admin;
      const second = await admin.apiKeys.create({ environment: env.environment_id });
      own = await startOwnApp(deps, { rateLimit: false });
      writer = new HttpClient(own.url, { Authorization: `Bearer ${env.api_key}` });
      reader = new HttpClient(own.url, { Authorization: `Bearer ${second.api_key}` });
      metrics = new HttpClient(own.url, { Authorization: `Bearer ${token}` });
      onStandby = postgres(standby.url, { max: 1, onnotice: () => {} });
    }, 120_000);

    afterAll(async () => {
      await own?.close();
      await onStandby?.end({ timeout: 1 }).catch(() => {});
      await replica?.close().catch(() => {});
      await handle?.close().catch(() => {});
      standby?.destroy();
      primary?.destroy();
    });

    /** Checks until the replica has replayed everything the primary had written. */
    const caughtUp = () =>
      until(async () => {
        await replica.check();
        return replica.status().state === 'up' && replica.status().lagBytes === 0;
      });

    /** The replica's postmaster and its children (backends, startup, WAL receiver). */
    function standbyProcesses(): number[] {
      const postmaster = Number(readFileSync(join(standby.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
        .split('\n')
        .map((line) => Number(line.trim()))
        .filter((pid) => pid > 0);
      return [postmaster, ...children];
    }

    /** The last statement of each of Atrium's connections to the replica, as the replica reports them. */
    async function lastQueriesOnStandby(): Promise<string[]> {
      const rows = await onStandby<{ query: string }[]>`
        select query from pg_stat_activity where application_name = 'atrium-replica'`;
      return rows.map((row) => row.query);
    }

    it('serves reads from the replica once it has caught up, as the replica itself and the metric show', async () => {
      const created = await writer.post('/organizations', { name: 'Replicated' });
      expect(created.status).toBe(201);
      await caughtUp();
      const servedBefore = replica.status().reads.replica;

      const read = await reader.get(`/organizations/${created.body.id}`);
      expect(read.status, read.text).toBe(200);
      expect(read.body.name).toBe('Replicated');
      const list = await reader.get('/organizations?limit=100');
      expect(list.status).toBe(200);
      expect(list.body.data.map((o: { id: string }) => o.id)).toContain(created.body.id);

      expect(replica.status().reads.replica).toBe(servedBefore + 2);
      // The replica's own counters flush within about a second of the reads.
      // The replica's own view: Atrium's connections to it last ran these reads.
      expect((await lastQueriesOnStandby()).some((q) => q.includes('"organizations"'))).toBe(true);
      const scraped = await metrics.get('/metrics');
      expect(scraped.status).toBe(200);
      expect(sample(scraped.text, 'atrium_replica_up')).toBe(1);
      expect(sample(scraped.text, 'atrium_replica_lag_bytes')).toBe(0);
      expect(sample(scraped.text, 'atrium_replica_reads_total{served_by="replica"}')).toBeGreaterThanOrEqual(2);
    });

    it('answers every GET of the catalogue from the replica exactly as from the primary', async () => {
      // One of everything, made through the API (and the admin surface for what only it creates).
      const admin = createCaller(createInnerContext(deps, `Bearer ${adminToken}`)).admin;
      // An environment of this test's own database: only what makeFixture reads of one.
      const own = { http: writer, environmentId, clientId, deps } as Partial<TestEnvironment> as TestEnvironment;
      const fixture = await makeFixture(own, admin);
      // The catalogue reads the organization by external id `ext-1`.
      expect((await writer.put(`/organizations/${fixture.organizationId}`, { external_id: 'ext-1' })).status).toBe(200);
      await caughtUp();

      const onPrimary = await startOwnApp({ ...deps, replica: undefined }, { rateLimit: false });
      try {
        const primaryReader = new HttpClient(onPrimary.url, reader.defaultHeaders);
        // The API-key reads (the client surfaces' token reads stay on the primary; the SSO profile
        // takes an access token from a code exchange, tested in tests/src/sso).
        const gets = OPERATIONS.filter((op) => op.method === 'GET' && op.auth === undefined);
        const served = replica.status().reads.replica;
        for (const op of gets) {
          const path = op.path(fixture) + (op.readQuery ? `?${op.readQuery(fixture)}` : '');
          const [fromReplica, fromPrimary] = [await reader.get(path), await primaryReader.get(path)];
          expect(fromReplica.status, `${op.name}: ${fromReplica.text}`).toBe(200);
          expect(fromReplica.text, op.name).toBe(fromPrimary.text);
        }
        // Every API-key GET was served by the replica (the JWKS is public: it reads the primary).
        const routed = gets.filter((op) => !op.path(fixture).startsWith('/sso/jwks/')).length;
        expect(replica.status().reads.replica - served).toBe(routed);
      } finally {
        await onPrimary.close();
      }
    });

    it('reads a key its own writes from the primary until the replica has replayed them; the lag metric moves', async () => {
      await caughtUp();
      await onStandby`select pg_wal_replay_pause()`;
      try {
        const created = await writer.post('/organizations', { name: 'Written while replay is paused' });
        expect(created.status).toBe(201);
        const id = created.body.id as string;

        // Another key reads the replica, which has not replayed the write: it is not there yet.
        const elsewhere = await reader.get(`/organizations/${id}`);
        expect(elsewhere.status).toBe(404);

        // The writing key reads its write, from the primary.
        const ryw = replica.status().reads.readYourWrites;
        const own = await writer.get(`/organizations/${id}`);
        expect(own.status, own.text).toBe(200);
        expect(own.body.name).toBe('Written while replay is paused');
        const ownList = await writer.get('/organizations?limit=100');
        expect(ownList.body.data.map((o: { id: string }) => o.id)).toContain(id);
        expect(replica.status().reads.readYourWrites).toBe(ryw + 2);

        // The lag shows: bytes at once, seconds from the second check on.
        await until(async () => {
          await replica.check();
          return (replica.status().lagSeconds ?? 0) > 0;
        });
        const lagging = await metrics.get('/metrics');
        expect(sample(lagging.text, 'atrium_replica_lag_bytes')).toBeGreaterThan(0);
        expect(sample(lagging.text, 'atrium_replica_lag_seconds')).toBeGreaterThan(0);
      } finally {
        await onStandby`select pg_wal_replay_resume()`;
      }
      await caughtUp();
      const caught = await metrics.get('/metrics');
      expect(sample(caught.text, 'atrium_replica_lag_bytes')).toBe(0);
      expect(sample(caught.text, 'atrium_replica_lag_seconds')).toBe(0);

      // Replayed: the writing key is back on the replica, and the other key sees the write.
      const served = replica.status().reads.replica;
      const list = await writer.get('/organizations?limit=100');
      expect(list.status).toBe(200);
      expect(replica.status().reads.replica).toBe(served + 1);
      expect(replica.status().pendingKeys).toBe(0);
    });

    it('reads a key its own writes in another process too, once that process has heard of them', async () => {
      await caughtUp();
      // A second process: its own replica router (hearing write positions over LISTEN), its own caches.
      const other = new ReadReplica(handle.db, { url: standby.url, primaryUrl: primary.url, checkEveryMs: 60_000 });
      await other.start();
      const app = await startOwnApp({ ...deps, replica: other, caches: newCaches() }, { rateLimit: false });
      const writerThere = new HttpClient(app.url, writer.defaultHeaders);
      const readerThere = new HttpClient(app.url, reader.defaultHeaders);
      await onStandby`select pg_wal_replay_pause()`;
      try {
        const created = await writer.post('/organizations', { name: 'Written in the first process' });
        expect(created.status).toBe(201);
        await until(async () => other.status().pendingKeys > 0, 2_000);
        const there = await writerThere.get(`/organizations/${created.body.id}`);
        expect(there.status, there.text).toBe(200);
        expect(other.status().reads.readYourWrites).toBe(1);
        expect((await readerThere.get(`/organizations/${created.body.id}`)).status).toBe(404);
      } finally {
        await onStandby`select pg_wal_replay_resume()`;
        await app.close();
        await other.close();
      }
    });

    it('never shows a key a read older than its write, with replay running and frequent checks', async () => {
      const live = new ReadReplica(handle.db, { url: standby.url, primaryUrl: primary.url, checkEveryMs: 10 });
      await live.start();
      const app = await startOwnApp({ ...deps, replica: live, caches: newCaches() }, { rateLimit: false });
      const client = new HttpClient(app.url, writer.defaultHeaders);
      try {
        for (let i = 0; i < 40; i++) {
          const created = await client.post('/organizations', { name: `Round ${i}` });
          expect(created.status).toBe(201);
          const renamed = await client.put(`/organizations/${created.body.id}`, { name: `Round ${i} renamed` });
          expect(renamed.status).toBe(200);
          const read = await client.get(`/organizations/${created.body.id}`);
          expect(read.status, read.text).toBe(200);
          expect(read.body.name).toBe(`Round ${i} renamed`);
        }
        // Each read was held on the primary for replay, or served by a replica that had replayed the
        // write (on this machine about a third were, the rest waited: both paths are exercised).
        const { reads } = live.status();
        expect(reads.readYourWrites + reads.replica).toBe(40);
      } finally {
        await app.close();
        await live.close();
      }
    });

    it('keeps at most maxKeys positions: an evicted one holds for every key until replayed', async () => {
      await caughtUp();
      const small = new ReadReplica(handle.db, { url: standby.url, maxKeys: 2, checkEveryMs: 60_000 });
      await small.start();
      await onStandby`select pg_wal_replay_pause()`;
      try {
        expect((await writer.post('/organizations', { name: 'Moves the WAL' })).status).toBe(201);
        await small.wrote('a');
        await small.wrote('b');
        await small.wrote('c');
        expect(small.status().pendingKeys).toBe(2);
        // 'a' was evicted unreplayed: every key, 'a' and one that never wrote too, reads the primary.
        expect(small.readerFor('a')).toBe(handle.db);
        expect(small.readerFor('never-wrote')).toBe(handle.db);
      } finally {
        await onStandby`select pg_wal_replay_resume()`;
      }
      await until(async () => {
        await small.check();
        return small.status().lagBytes === 0;
      });
      expect(small.readerFor('never-wrote')).toBe(small.db);
      expect(small.readerFor('a')).toBe(small.db);
      expect(small.status().pendingKeys).toBe(0);
      await small.close();
    });

    it('reads from the primary while the replica lags past the bound', async () => {
      await caughtUp();
      const strict = new ReadReplica(handle.db, { url: standby.url, maxLagMs: 100, checkEveryMs: 60_000 });
      await strict.start();
      const app = await startOwnApp({ ...deps, replica: strict }, { rateLimit: false });
      const client = new HttpClient(app.url, reader.defaultHeaders);
      await onStandby`select pg_wal_replay_pause()`;
      try {
        const created = await writer.post('/organizations', { name: 'Behind the bound' });
        expect(created.status).toBe(201);
        await until(async () => {
          await strict.check();
          return strict.status().state === 'lagging';
        });
        const read = await client.get(`/organizations/${created.body.id}`);
        expect(read.status, read.text).toBe(200);
        expect(strict.status().reads).toMatchObject({ replica: 0, primary: 1 });
      } finally {
        await onStandby`select pg_wal_replay_resume()`;
        await app.close();
        await strict.close();
      }
    });

    it('falls back to the primary with no error when the replica stops, and returns to it when it is back', async () => {
      const created = await writer.post('/organizations', { name: 'Survives the replica' });
      await caughtUp();
      await onStandby.end({ timeout: 1 });
      standby.stop('fast');

      // No check has run yet: the first read finds the replica gone and is served by the primary.
      const first = await reader.get(`/organizations/${created.body.id}`);
      expect(first.status, first.text).toBe(200);
      const reads = await Promise.all([
        reader.get(`/organizations/${created.body.id}`),
        reader.get('/organizations?limit=5'),
        writer.get(`/organizations/${created.body.id}`),
      ]);
      for (const res of reads) expect(res.status, res.text).toBe(200);
      expect(replica.status().reads.fallbacks).toBeGreaterThanOrEqual(1);
      await replica.check();
      expect(replica.status().state).toBe('down');
      const down = await metrics.get('/metrics');
      expect(sample(down.text, 'atrium_replica_up')).toBe(0);
      expect(sample(down.text, 'atrium_replica_lag_seconds')).toBeNaN();

      standby.start();
      onStandby = postgres(standby.url, { max: 1, onnotice: () => {} });
      await caughtUp();
      const served = replica.status().reads.replica;
      const back = await reader.get(`/organizations/${created.body.id}`);
      expect(back.status).toBe(200);
      expect(replica.status().reads.replica).toBe(served + 1);
    });

    it('runs a read on the primary when the replica hangs without an error', async () => {
      const created = await writer.post('/organizations', { name: 'Read past a hung replica' });
      await caughtUp();
      const hung = new ReadReplica(handle.db, { url: standby.url, readTimeoutMs: 300, checkEveryMs: 60_000 });
      await hung.start();
      const app = await startOwnApp({ ...deps, replica: hung }, { rateLimit: false });
      const client = new HttpClient(app.url, reader.defaultHeaders);
      // Every process of the replica stopped (SIGSTOP): connections stay open, nothing answers.
      const pids = standbyProcesses();
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      try {
        const started = Date.now();
        const read = await client.get(`/organizations/${created.body.id}`);
        expect(read.status, read.text).toBe(200);
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(hung.status()).toMatchObject({ state: 'down', reads: { replica: 1, fallbacks: 1 } });
        // Down now: the next read goes to the primary at once.
        expect((await client.get(`/organizations/${created.body.id}`)).status).toBe(200);
        expect(hung.status().reads.primary).toBe(1);
      } finally {
        for (const pid of pids) process.kill(pid, 'SIGCONT');
      }
      await until(async () => {
        await hung.check();
        return hung.status().state === 'up';
      });
      await app.close();
      await hung.close();
    });

    it('is set up by the server from DATABASE_REPLICA_URL, and closed with it', async () => {
      const config = loadConfig({
        DATABASE_URL: primary.url,
        DATABASE_REPLICA_URL: standby.url,
        DATABASE_REPLICA_CHECK_MS: '50',
        ATRIUM_MASTER_KEY: randomBytes(32).toString('base64'),
        PORT: '0',
        ATRIUM_WORKERS: 'false',
        RATE_LIMIT: 'off',
      });
      expect(config.replica).toEqual({ url: standby.url, maxLagMs: 5_000, checkEveryMs: 50, readTimeoutMs: 2_000 });
      const runtime = await startRuntime(config, createLogger('silent'));
      try {
        const started = runtime.deps.replica;
        expect(started?.status().state).toBe('up');
        const res = await new HttpClient(runtime.url, reader.defaultHeaders).get('/organizations?limit=1');
        expect(res.status, res.text).toBe(200);
        expect(started?.status().reads.replica).toBe(1);
      } finally {
        await runtime.close();
      }
    });
  },
);
