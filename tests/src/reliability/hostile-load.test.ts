import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDatabase } from '../helpers/scratch-database.ts';

/**
 * The three crashes of issue #19, against the server `npm start` runs (the esbuild bundle, with
 * its V8 flags), as a separate process: a tRPC batch of 60 large pages, 100,000 requests with
 * distinct bogus API keys, and concurrent reads of an organization at its domain quota. The
 * server must keep answering `/healthz`, and its RSS must grow by less than 50 MB. On a
 * PostgreSQL run the server gets a database of its own; on PGlite, a data directory of its own.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const databaseUrl = inject('databaseUrl');

/** A hang guard, not a speed target (this VM does the bogus keys in 12–26 s): each phase checks it. */
const BUDGET_MS = 150_000;
const RSS_GROWTH_LIMIT_MB = 50;
const BOGUS_REQUESTS = 100_000;
const DOMAIN_QUOTA = 1_000;
/** A bundle of this test's own, so that it never races startup.test.ts writing the default one. */
const bundle = join(ROOT, 'server', 'dist', `hostile-${process.pid}.mjs`);

const startFlags = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .trim()
  .split(/\s+/)
  .slice(1, -1);

interface Answer {
  status: number;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let base = '';

function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: payload === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs `count` calls, `concurrency` at a time, and tallies their statuses. */
async function fire(
  count: number,
  concurrency: number,
  make: (i: number) => Promise<Answer>,
  check: (answer: Answer, i: number) => void = () => {},
): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  async function lane() {
    while (next < count) {
      const i = next++;
      const answer = await make(i);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      check(answer, i);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  return statuses;
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function bogusKey(): string {
  const bytes = randomBytes(40);
  let key = 'sk_test_';
  for (const byte of bytes) key += BASE62[byte % 62];
  return key;
}

describe('hostile load on the built server', () => {
  let child: ChildProcess | undefined;
  let output = '';
  let dataDir: string | undefined;
  let database: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let auth: Record<string, string> = {};

  beforeAll(async () => {
    execFileSync(process.execPath, ['server/build.mjs', bundle], { cwd: ROOT, stdio: 'pipe' });
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ACCESS_LOG: 'off',
      ATRIUM_WORKERS: 'false',
      ATRIUM_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    if (databaseUrl) {
      database = await scratchDatabase(databaseUrl, 'hostile');
      env.DATABASE_URL = database.url;
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'atrium-hostile-'));
      env.ATRIUM_DATA_DIR = dataDir;
    }
    const started = spawn(process.execPath, [...startFlags, bundle], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (url && output.includes('API reference')) {
          clearTimeout(timer);
          base = url;
          resolve();
        }
      };
      started.stdout?.on('data', onData);
      started.stderr?.on('data', onData);
      started.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
    });
    const apiKey = /WORKOS_API_KEY=(sk_test_\w+)/.exec(output)?.[1];
    expect(apiKey).toBeDefined();
    auth = { Authorization: `Bearer ${apiKey}` };
  }, 60_000);

  afterAll(async () => {
    agent.destroy();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(bundle, { force: true });
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
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
      const pid = child?.pid as number;

      // 100 organizations of 50 metadata values of 600 characters each: a page of 100 is ~3 MB.
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`key_${k}`, 'x'.repeat(600)]));
      const seeded = await fire(100, 8, (i) =>
        call('POST', '/organizations', auth, { name: `Hostile ${i}`, metadata }),
      );
      expect(Object.fromEntries(seeded)).toEqual({ 201: 100 });
      // One organization at its domain quota.
      const org = JSON.parse((await call('POST', '/organizations', auth, { name: 'At quota' })).body) as { id: string };
      const domains = await fire(DOMAIN_QUOTA, 16, (i) =>
        call('POST', '/organization_domains', auth, { organization_id: org.id, domain: `d${i}-hostile-load.com` }),
      );
      expect(Object.fromEntries(domains)).toEqual({ 201: DOMAIN_QUOTA });
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
      expect(Object.fromEntries(batches)).toEqual({ 400: 40 });
      const small = await call('GET', batchPath(10, 5), auth);
      expect(small.status).toBe(200);
      expect((JSON.parse(small.body) as unknown[]).length).toBe(10);
      inTime('the batches');

      // 2. 100,000 requests, each with a key never seen before: refused, and nothing kept per key.
      const bogus = await fire(BOGUS_REQUESTS, 64, () =>
        call('GET', '/organizations', { Authorization: `Bearer ${bogusKey()}` }),
      );
      expect([...bogus.keys()].sort()).toEqual([...bogus.keys()].filter((s) => s === 401 || s === 429).sort());
      expect([...bogus.values()].reduce((a, b) => a + b, 0)).toBe(BOGUS_REQUESTS);
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
      expect(Object.fromEntries(reads)).toEqual({ 200: 200 });
      inTime('the reads');

      // The legitimate key was not locked out by the bogus traffic, and the process is healthy.
      expect((await call('GET', '/organizations?limit=1', auth)).status).toBe(200);
      expect((await call('GET', '/healthz', {})).status).toBe(200);
      const after = rssMb(pid);
      console.info(
        `[hostile-load] RSS before ${before} MB, after ${after} MB (+${Math.round((after - before) * 10) / 10} MB); ` +
          `bogus keys: ${JSON.stringify(Object.fromEntries(bogus))}`,
      );
      expect(after - before).toBeLessThan(RSS_GROWTH_LIMIT_MB);
      expect(child?.exitCode).toBeNull();
    },
    BUDGET_MS + 10_000,
  );
});
