import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { createAdminClient, type DevDnsServer, startDevDns } from '@atrium/server';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { scratchDatabase } from '../helpers/scratch-database.ts';
import {
  freePort,
  killSpawnedServers,
  type SpawnedProcess,
  type SpawnedServer,
  spawnEntry,
  spawnServer,
} from '../helpers/spawn-server.ts';
import { HttpClient } from '../helpers/world.ts';
import { adminTokenFor } from '../reliability/own-app.ts';

/**
 * Two API processes and two workers over one PostgreSQL database, each a real process started
 * here: what one process does, the other sees (rate limits, revocations, rotations, idempotency
 * keys), and the workers' leased jobs run exactly once, also when one worker is SIGKILLed
 * mid-lease. The caches' time bounds are set far beyond the 1 s asserted, so only LISTEN/NOTIFY
 * can make the assertions hold. PostgreSQL only: PGlite is one process's database.
 */
const databaseUrl = inject('databaseUrl');
const RATE_LIMIT = 40;

/** The status of a GET with `key` sent from a chosen loopback address (all of 127.0.0.0/8 is local). */
function statusFrom(url: string, path: string, localAddress: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { localAddress, agent: false, headers: { Authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Polls `check` until it holds or `ms` pass; answers how long it took. No sleep stands in for a wait. */
async function within(ms: number, check: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The pid (of `pids`) holding the TCP or UDP socket whose local port is `port` (Linux /proc). */
function socketOwner(pids: number[], port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6', '/proc/net/udp', '/proc/net/udp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hex}`) && fields[9]) inodes.add(fields[9]);
    }
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // not running (any more)
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1] && inodes.has(match[1])) return pid;
      } catch {
        // The descriptor closed while we looked.
      }
    }
  }
  return undefined;
}

describe.skipIf(!databaseUrl)(
  'two API processes and two workers over one PostgreSQL (PostgreSQL only: PGlite is one process’s database)',
  () => {
    const token = adminTokenFor('scale');
    const masterKey = randomBytes(32).toString('base64');
    let database: Awaited<ReturnType<typeof scratchDatabase>>;
    let sql: postgres.Sql;
    let dns: DevDnsServer;
    let a: SpawnedServer;
    let b: SpawnedServer;
    let workers: SpawnedProcess[] = [];
    let common: Record<string, string>;

    const workerEnv = () => ({
      ...common,
      DNS_SERVERS: dns.address,
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      // A delivery taken by a worker that dies is leased 2 + 1 s, then another worker takes it.
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_GRACE_MS: '1000',
      // A DNS check taken by a worker that dies is leased 1.5 s × 8 + 1 s (the batch's lookups, then grace).
      DNS_TIMEOUT_MS: '1500',
      DNS_LEASE_GRACE_MS: '1000',
    });
    const startWorker = () => spawnEntry('server/src/worker-main.ts', workerEnv(), 'Atrium workers started');

    beforeAll(async () => {
      database = await scratchDatabase(databaseUrl as string, 'scale');
      sql = postgres(database.url, { max: 2, onnotice: () => {} });
      dns = await startDevDns();
      common = {
        DATABASE_URL: database.url,
        ATRIUM_MASTER_KEY: masterKey,
        ATRIUM_ADMIN_TOKEN: token,
        ATRIUM_MIGRATE: 'false',
        // Far past the 1 s asserted: only the invalidation channel can be that fast.
        ATRIUM_API_KEY_CACHE_MS: '600000',
        ATRIUM_KEY_CACHE_SECONDS: '600',
        RATE_LIMIT: 'on',
        RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
        // An hour's window, so that no window ends in the middle of the test.
        RATE_LIMIT_WINDOW_SECONDS: '3600',
        ATRIUM_WORKERS: 'false',
        // The receivers of these tests listen on loopback.
        WEBHOOKS_ALLOW_PRIVATE: 'true',
      };
      // `npm run migrate`, once, before any process starts.
      const migrate = await spawnEntry('server/src/migrate-main.ts', { DATABASE_URL: database.url }, undefined);
      expect(await migrate.exited).toEqual({ code: 0, signal: null });
      expect(migrate.output()).toContain('Migrations applied.');
      [a, b] = await Promise.all([spawnServer(common, await freePort()), spawnServer(common, await freePort())]);
      workers = await Promise.all([startWorker(), startWorker()]);
      // Both API processes hear the channel before the tests rely on it.
      for (const server of [a, b]) {
        await within(15_000, async () => (await (await fetch(`${server.url}/readyz`)).status) === 200, 'ready');
      }
      await within(
        15_000,
        async () =>
          Number(
            (await sql`select count(*)::int as n from pg_stat_activity where application_name = 'atrium-listen'`)[0]?.n,
          ) >= 2,
        'both API processes listen',
      );
    }, 120_000);

    afterAll(async () => {
      killSpawnedServers();
      await dns?.close();
      await sql?.end({ timeout: 5 });
      await database?.drop();
    });

    async function newEnvironment() {
      const created = await createAdminClient(a.url, token).environments.create.mutate({
        name: `scale-${randomUUID()}`,
      });
      const auth = { Authorization: `Bearer ${created.api_key}` };
      return { ...created, onA: new HttpClient(a.url, auth), onB: new HttpClient(b.url, auth) };
    }

    it('holds the rate limit across both processes: the limit once, not twice', async () => {
      const env = await newEnvironment();
      const statuses: number[] = [];
      for (let i = 0; i < RATE_LIMIT + 20; i++) {
        const res = await (i % 2 === 0 ? env.onA : env.onB).get('/organizations?limit=1');
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_LIMIT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      // Refused on both sides once the shared window is spent.
      expect(statuses.slice(RATE_LIMIT)).toEqual(Array(20).fill(429));
      // Counted in the shared table: each process asks it once past the limit, then refuses from
      // memory until the window ends (no query per refused request).
      const [row] = await sql`select w.used from rate_limit_windows w join api_keys k on w.bucket = 'k:' || k.id
        where k.environment_id = ${env.environment_id}`;
      expect(Number(row?.used)).toBeGreaterThan(RATE_LIMIT);
      expect(Number(row?.used)).toBeLessThanOrEqual(RATE_LIMIT + 2);
      const [persistence] = await sql`select relpersistence from pg_class where relname = 'rate_limit_windows'`;
      expect(persistence?.relpersistence).toBe('u');
    });

    it('refuses a revoked key in both processes within 1 s', async () => {
      const env = await newEnvironment();
      const admin = createAdminClient(a.url, token);
      const { api_key: key } = await admin.apiKeys.create.mutate({ environment: env.environment_id, live: false });
      const clients = [a, b].map((server) => new HttpClient(server.url, { Authorization: `Bearer ${key}` }));
      // Both processes cache the key as live.
      for (const client of clients) expect((await client.get('/organizations?limit=1')).status).toBe(200);
      await admin.apiKeys.revoke.mutate({ environment: env.environment_id, key_prefix: key.slice(0, 16) });
      const took = await within(
        1_000,
        async () => {
          const statuses = await Promise.all(
            clients.map(async (client) => (await client.get('/organizations?limit=1')).status),
          );
          return statuses.every((status) => status === 401);
        },
        'revoked key refused by both',
      );
      console.info(`[scale] revocation refused by both processes after ${took} ms`);
      // The environment's other key still works on both.
      expect((await env.onA.get('/organizations?limit=1')).status).toBe(200);
      expect((await env.onB.get('/organizations?limit=1')).status).toBe(200);
    });

    it('serves at B, from an address flooding bogus keys there, a key made through A a moment ago; refuses it once revoked', async () => {
      const env = await newEnvironment();
      const flooded = '127.0.0.90';
      const bogus = (i: number) => `sk_test_${`scale${i}`.padEnd(40, 'Q')}`;
      const statuses = new Map<number, number>();
      let next = 0;
      const lane = async () => {
        while (next < 320) {
          const status = await statusFrom(b.url, '/organizations?limit=1', flooded, bogus(next++));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 16 }, lane));
      expect(Object.fromEntries(statuses)).toEqual({ 401: 300, 429: 20 });
      // Made through A, used at B from the flooded address at once (before or after B hears of it).
      const admin = createAdminClient(a.url, token);
      const { api_key: key } = await admin.apiKeys.create.mutate({ environment: env.environment_id, live: false });
      expect(await statusFrom(b.url, '/organizations?limit=1', flooded, key)).toBe(200);
      await admin.apiKeys.revoke.mutate({ environment: env.environment_id, key_prefix: key.slice(0, 16) });
      // Once revoked it is a bad credential like the others: refused at B, 429 from the flooded address.
      await within(
        1_000,
        async () => (await statusFrom(b.url, '/organizations?limit=1', flooded, key)) === 429,
        'revoked key refused at B',
      );
      expect(await statusFrom(b.url, '/organizations?limit=1', '127.0.0.91', key)).toBe(401);
    });

    it('publishes a rotated signing key in both JWKSes within 1 s', async () => {
      const env = await newEnvironment();
      const jwks = async (server: SpawnedServer) =>
        (
          (await (await fetch(`${server.url}/sso/jwks/${env.client_id}`)).json()) as { keys: { kid: string }[] }
        ).keys.map((k) => k.kid);
      const before = await Promise.all([jwks(a), jwks(b)]);
      expect(before[0]).toEqual(before[1]);
      expect(before[0]).toHaveLength(1);
      const rotated = await createAdminClient(a.url, token).signingKeys.rotate.mutate({
        environment: env.environment_id,
        activate_after_seconds: 300,
      });
      const took = await within(
        1_000,
        async () => (await Promise.all([jwks(a), jwks(b)])).every((kids) => kids.includes(rotated.kid)),
        'rotated key in both JWKSes',
      );
      console.info(`[scale] rotated key in both JWKSes after ${took} ms`);
    });

    it('listens again after its connection is cut, and invalidations reach it once more', async () => {
      const listeners = async () =>
        (
          await sql`select pid from pg_stat_activity where application_name = 'atrium-listen' and datname = current_database()`
        ).map((r) => Number(r.pid));
      const before = await listeners();
      expect(before).toHaveLength(2);
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where application_name = 'atrium-listen' and datname = current_database()`;
      // Each process finds the drop, reconnects with backoff and listens again on a new backend.
      await within(
        10_000,
        async () => {
          const now = await listeners();
          return now.length === 2 && now.every((pid) => !before.includes(pid));
        },
        'both listen again',
      );
      for (const server of [a, b]) {
        await within(
          5_000,
          async () =>
            /atrium_invalidation_listening 1/.test(
              await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).text(),
            ),
          'listening metric back to 1',
        );
      }
      const env = await newEnvironment();
      const admin = createAdminClient(a.url, token);
      const { api_key: key } = await admin.apiKeys.create.mutate({ environment: env.environment_id, live: false });
      const onB = new HttpClient(b.url, { Authorization: `Bearer ${key}` });
      expect((await onB.get('/organizations?limit=1')).status).toBe(200);
      await admin.apiKeys.revoke.mutate({ environment: env.environment_id, key_prefix: key.slice(0, 16) });
      await within(
        1_000,
        async () => (await onB.get('/organizations?limit=1')).status === 401,
        'revocation after reconnect',
      );
    });

    it("replays an idempotency key's first answer from the other process", async () => {
      const env = await newEnvironment();
      const key = randomUUID();
      const body = { name: `Idempotent ${key}` };
      const first = await env.onA.request('POST', '/organizations', { body, headers: { 'Idempotency-Key': key } });
      expect(first.status).toBe(201);
      const replay = await env.onB.request('POST', '/organizations', { body, headers: { 'Idempotency-Key': key } });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const [row] =
        await sql`select count(*)::int as n from organizations where environment_id = ${env.environment_id}`;
      expect(row?.n).toBe(1);
    });

    it('verifies a domain once and delivers its webhook once, with two workers polling', async () => {
      const env = await newEnvironment();
      const receiver = await new Receiver().start();
      try {
        const endpoint = await env.onA.post('/webhook_endpoints', {
          endpoint_url: receiver.url,
          events: ['organization_domain.verified'],
        });
        expect(endpoint.status).toBe(201);
        const org = await env.onA.post('/organizations', { name: 'Once' });
        const domain = await env.onB.post('/organization_domains', {
          organization_id: org.body.id,
          domain: `once-${Date.now()}.com`,
        });
        expect(domain.status).toBe(201);
        dns.set(`${domain.body.verification_prefix}.${domain.body.domain}`, { txt: [domain.body.verification_token] });
        expect((await env.onA.post(`/organization_domains/${domain.body.id}/verify`, {})).status).toBe(201);
        await within(
          20_000,
          async () =>
            (await sql`select state from organization_domains where id = ${domain.body.id}`)[0]?.state === 'verified',
          'domain verified',
        );
        await within(
          20_000,
          async () =>
            (
              await sql`select count(*)::int as n from webhook_deliveries where environment_id = ${env.environment_id} and status = 'delivered'`
            )[0]?.n === 1,
          'webhook delivered',
        );
        const events = await env.onA.get('/events?events=organization_domain.verified');
        expect(events.body.data.map((e: { data: { id: string } }) => e.data.id)).toEqual([domain.body.id]);
        const [deliveries] =
          await sql`select count(*)::int as n, sum(attempts)::int as attempts from webhook_deliveries where environment_id = ${env.environment_id}`;
        expect(deliveries).toEqual({ n: 1, attempts: 1 });
        const [attempts] =
          await sql`select count(*)::int as n from webhook_attempts where environment_id = ${env.environment_id}`;
        expect(attempts?.n).toBe(1);
        expect(receiver.requests).toHaveLength(1);
        expect(JSON.parse(receiver.requests[0]?.body ?? '{}')).toMatchObject({
          event: 'organization_domain.verified',
          data: { id: domain.body.id },
        });
      } finally {
        await receiver.close();
      }
    });

    it('loses no delivery when the worker holding its lease is SIGKILLed mid-attempt', async () => {
      const env = await newEnvironment();
      // The first attempt never answers: the worker that took it holds the lease when it dies.
      const receiver = await new Receiver((n) => (n === 0 ? 'hang' : 200)).start();
      try {
        await env.onA.post('/webhook_endpoints', { endpoint_url: receiver.url, events: ['organization.created'] });
        const org = await env.onB.post('/organizations', { name: 'Killed mid-lease' });
        expect(org.status).toBe(201);
        await receiver.waitFor(1, 20_000);
        const pids = workers.map((w) => w.child.pid as number);
        // Both workers are alive and polling: either may have taken the delivery.
        for (const w of workers) expect(w.child.exitCode, w.output()).toBeNull();
        const holder = socketOwner(pids, receiver.requests[0]?.remotePort as number);
        expect(
          holder,
          workers.map((w) => `${w.child.pid} ${w.child.exitCode}: ${w.output()}`).join('\n'),
        ).toBeDefined();
        const victim = workers.find((w) => w.child.pid === holder) as SpawnedProcess;
        victim.child.kill('SIGKILL');
        expect((await victim.exited).signal).toBe('SIGKILL');
        // The survivor takes the delivery once the dead worker's lease (3 s) has passed.
        await receiver.waitFor(2, 20_000);
        await within(
          5_000,
          async () =>
            (await sql`select status from webhook_deliveries where environment_id = ${env.environment_id}`)[0]
              ?.status === 'delivered',
          'delivered after the kill',
        );
        const second = receiver.requests[1];
        expect(socketOwner(pids, second?.remotePort as number)).not.toBe(holder);
        expect(JSON.parse(second?.body ?? '{}')).toMatchObject({
          event: 'organization.created',
          data: { id: org.body.id },
        });
        // One delivery, one recorded attempt (the killed one died before recording anything).
        const [deliveries] =
          await sql`select count(*)::int as n, sum(attempts)::int as attempts from webhook_deliveries where environment_id = ${env.environment_id}`;
        expect(deliveries).toEqual({ n: 1, attempts: 1 });
        // Start a replacement, so later tests have two workers again.
        workers = [...workers.filter((w) => w !== victim), await startWorker()];
      } finally {
        await receiver.close();
      }
    });

    it('loses no DNS check when the worker holding its lease is SIGKILLed mid-lookup', async () => {
      const env = await newEnvironment();
      const org = await env.onA.post('/organizations', { name: 'Killed mid-lookup' });
      const domain = await env.onA.post('/organization_domains', {
        organization_id: org.body.id,
        domain: `killed-${Date.now()}.com`,
      });
      const name = `${domain.body.verification_prefix}.${domain.body.domain}`;
      // The resolver never answers: the worker that asks holds the lease while it waits.
      dns.set(name, 'no-answer');
      const asked = dns.senders.get(name)?.length ?? 0;
      expect((await env.onB.post(`/organization_domains/${domain.body.id}/verify`, {})).status).toBe(201);
      await within(10_000, async () => (dns.senders.get(name)?.length ?? 0) > asked, 'a worker asks');
      const pids = workers.map((w) => w.child.pid as number);
      const holder = socketOwner(pids, dns.senders.get(name)?.at(-1) as number);
      expect(holder).toBeDefined();
      const victim = workers.find((w) => w.child.pid === holder) as SpawnedProcess;
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      // Now the record answers; the survivor takes the check when the dead worker's lease ends.
      dns.set(name, { txt: [domain.body.verification_token] });
      // Polled in the database: the API key's rate limit (40 an hour here) would not last a poll.
      await within(
        45_000,
        async () =>
          (await sql`select state from organization_domains where id = ${domain.body.id}`)[0]?.state === 'verified',
        'verified after the kill',
      );
      const events = await env.onB.get('/events?events=organization_domain.verified');
      expect(events.body.data.map((e: { data: { id: string } }) => e.data.id)).toEqual([domain.body.id]);
      // The survivor asked after the kill: the dead worker's lookup was never applied.
      const survivors = workers.map((w) => w.child.pid as number);
      expect(socketOwner(survivors, dns.senders.get(name)?.at(-1) as number)).not.toBe(holder);
      workers = [...workers.filter((w) => w !== victim), await startWorker()];
    }, 90_000);
  },
);
