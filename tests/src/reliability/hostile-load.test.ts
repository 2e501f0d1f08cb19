import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type BuiltServer, bogusKey, caller, fire, rssMb, startBuiltServer, tally } from '../helpers/built-server.ts';

/**
 * The three crashes of issue #19, against the server `npm start` runs (the esbuild bundle, with
 * its V8 flags), as a separate process: a tRPC batch of 60 large pages, 100,000 requests with
 * distinct bogus API keys, and concurrent reads of an organization at its domain quota. The
 * server must keep answering `/healthz`, and its RSS must grow by less than 50 MB. On a
 * PostgreSQL run the server gets a database of its own; on PGlite, a data directory of its own.
 */
const databaseUrl = inject('databaseUrl');

/** A hang guard, not a speed target (this VM does the bogus keys in 12–26 s): each phase checks it. */
const BUDGET_MS = 150_000;
const RSS_GROWTH_LIMIT_MB = 50;
const BOGUS_REQUESTS = 100_000;
const DOMAIN_QUOTA = 1_000;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let server: BuiltServer;
const call = caller(agent, () => server.base);

describe('hostile load on the built server', () => {
  let auth: Record<string, string> = {};

  beforeAll(async () => {
    // A bundle of this test's own, so that it never races startup.test.ts writing the default one.
    server = await startBuiltServer({ name: 'hostile', databaseUrl, startTimeoutMs: 30_000 });
    expect(server.apiKey).toBeDefined();
    auth = { Authorization: `Bearer ${server.apiKey}` };
  }, 60_000);

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
  });

  it(
    'survives a 60-call batch of large pages, 100,000 bogus keys and reads at the domain quota, with flat memory',
    async () => {
      const deadline = Date.now() + BUDGET_MS;
      const t0 = Date.now();
      const inTime = (phase: string) => {
        console.info(`[hostile-load] ${phase} done at ${Date.now() - t0} ms`);
        if (Date.now() > deadline) throw new Error(`over the ${BUDGET_MS} ms budget after ${phase}`);
      };
      const pid = server.pid;

      // 100 organizations of 50 metadata values of 600 characters each: a page of 100 is ~3 MB.
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`key_${k}`, 'x'.repeat(600)]));
      const seeded = await fire(100, 8, (i) =>
        call('POST', '/organizations', auth, { name: `Hostile ${i}`, metadata }),
      );
      expect(tally(seeded)).toEqual({ 201: 100 });
      // One organization at its domain quota.
      const org = JSON.parse((await call('POST', '/organizations', auth, { name: 'At quota' })).body) as { id: string };
      const domains = await fire(DOMAIN_QUOTA, 16, (i) =>
        call('POST', '/organization_domains', auth, { organization_id: org.id, domain: `d${i}-hostile-load.com` }),
      );
      expect(tally(domains)).toEqual({ 201: DOMAIN_QUOTA });
      const over = await call('POST', '/organization_domains', auth, {
        organization_id: org.id,
        domain: 'one-too-many-hostile-load.com',
      });
      expect(over.status).toBe(422);
      expect(JSON.parse(over.body)).toMatchObject({ code: 'quota_exceeded' });
      // Warm up the paths measured below, then take the baseline.
      await fire(200, 8, () => call('GET', '/organizations?limit=100', auth));
      inTime('seeding');
      const before = rssMb(pid);

      // 1. A batch of 60 pages of 100 is refused before anything runs; a batch of 10 still works.
      const calls = 60;
      const batchPath = (n: number, limit: number) =>
        `/trpc/${Array(n).fill('organizations.list').join(',')}?batch=1&input=${encodeURIComponent(
          JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, k) => [String(k), { limit }]))),
        )}`;
      const batches = await fire(
        40,
        8,
        () => call('GET', batchPath(calls, 100), auth),
        // One short error per call, never the pages: ~17 KB for 60 calls.
        (answer) => expect(answer.body.length).toBeLessThan(64 * 1024),
      );
      expect(tally(batches)).toEqual({ 400: 40 });
      const small = await call('GET', batchPath(10, 5), auth);
      expect(small.status).toBe(200);
      expect((JSON.parse(small.body) as unknown[]).length).toBe(10);
      inTime('the batches');

      // 2. 100,000 requests, each with a key never seen before: refused, and nothing kept per key.
      const bogus = tally(
        await fire(BOGUS_REQUESTS, 64, () => call('GET', '/organizations', { Authorization: `Bearer ${bogusKey()}` })),
      );
      expect(Object.keys(bogus).sort()).toEqual(
        Object.keys(bogus)
          .filter((s) => s === '401' || s === '429')
          .sort(),
      );
      expect(Object.values(bogus).reduce((a, b) => a + b, 0)).toBe(BOGUS_REQUESTS);
      inTime('the bogus keys');

      // 3. Concurrent reads of the organization holding its full quota of domains.
      const reads = await fire(
        200,
        8,
        () => call('GET', `/organizations/${org.id}`, auth),
        (answer) => {
          if (answer.status === 200)
            expect((JSON.parse(answer.body) as { domains: unknown[] }).domains.length).toBe(DOMAIN_QUOTA);
        },
      );
      expect(tally(reads)).toEqual({ 200: 200 });
      inTime('the reads');

      // The legitimate key was not locked out by the bogus traffic, and the process is healthy.
      expect((await call('GET', '/organizations?limit=1', auth)).status).toBe(200);
      expect((await call('GET', '/healthz', {})).status).toBe(200);
      const after = rssMb(pid);
      console.info(
        `[hostile-load] RSS before ${before} MB, after ${after} MB (+${Math.round((after - before) * 10) / 10} MB); ` +
          `bogus keys: ${JSON.stringify(bogus)}`,
      );
      expect(after - before).toBeLessThan(RSS_GROWTH_LIMIT_MB);
      expect(server.exitCode()).toBeNull();
    },
    BUDGET_MS + 10_000,
  );
});
