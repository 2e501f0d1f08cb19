import { randomBytes, scryptSync } from 'node:crypto';
import { Agent } from 'node:http';
import { availableParallelism } from 'node:os';
import { IMPORTED_HASH_BOUNDS } from '@atrium/routers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type Answer,
  type BuiltServer,
  caller,
  fire,
  json,
  p95,
  rssMb,
  startBuiltServer,
  tally,
} from '../helpers/built-server.ts';

/**
 * Issue #34 item 3 against the server `npm start` runs (the esbuild bundle, with its V8 flags), as
 * a separate process (the approach of hostile-load.test.ts): users whose imported scrypt hashes
 * sit at the highest cost Atrium accepts (N = 2^17, r = 8: 128 MiB a check), and one environment
 * that keeps checking their passwords and creating users with passwords, while a second
 * environment reads. The server's RSS stays within what the password pool allows (its slots one
 * environment may hold, times 128 MiB, plus slack), and every read of the other environment is
 * answered 2xx. Prints the figures it measured.
 */
const databaseUrl = inject('databaseUrl');
/** A hang guard, not a speed target (this shared 2-core VM starts the bundle in 5-30 s). */
const BUDGET_MS = 180_000;
/** The highest allowed imported scrypt cost: N·r·p = 2^20. */
const LOG_N = 17;
const R = 8;
const MAX_SCRYPT_MIB = (128 * 2 ** LOG_N * R) / 2 ** 20;
/** The pool of routers/src/lib/hash-pool.ts: one environment holds all slots but one. */
const SLOTS = Math.max(2, Math.min(4, availableParallelism()));
/** What one environment's checks may hold at once, plus slack for the heap and the other work. */
const RSS_GROWTH_LIMIT_MB = (SLOTS - 1) * MAX_SCRYPT_MIB + 96;
const PASSWORD = 'correct horse battery staple';
const USERS = 8;
const WIDGET_HEADERS = { 'WorkOS-Widgets-Version': '1' };

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let server: BuiltServer;
const call = caller(agent, () => server.base);

describe('hostile password load on the built server', () => {
  let authA: Record<string, string> = {};
  let authB: Record<string, string> = {};

  beforeAll(async () => {
    server = await startBuiltServer({ name: 'hostile-passwords', databaseUrl, startTimeoutMs: 90_000 });
    const { apiKey, adminToken } = server;
    expect(apiKey).toBeDefined();
    expect(adminToken).toBeDefined();
    authA = { Authorization: `Bearer ${apiKey}` };
    // A second environment, made through the admin API as the CLI does.
    const created = await call(
      'POST',
      '/trpc/admin.environments.create',
      { Authorization: `Bearer ${adminToken}` },
      { name: 'bystander' },
    );
    expect(created.status, created.body).toBe(200);
    authB = { Authorization: `Bearer ${json<{ result: { data: { api_key: string } } }>(created).result.data.api_key}` };
  }, 150_000);

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
  });

  it(
    'checks passwords at the highest allowed imported cost with bounded RSS, and another environment keeps reading',
    async () => {
      const pid = server.pid;
      expect(2 ** LOG_N * R).toBe(IMPORTED_HASH_BOUNDS.scrypt.maxWork);
      // The hash an importer brings, at the bound; and one past it, as in the issue (ln=18, r=32).
      const salt = randomBytes(16);
      const t = performance.now();
      const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** LOG_N, r: R, p: 1, maxmem: 256 * 2 ** LOG_N * R });
      const hashMs = Math.round(performance.now() - t);
      const hash = `$scrypt$ln=${LOG_N},r=${R},p=1$${salt.toString('base64')}$${key.toString('base64')}`;
      const org = json<{ id: string }>(await call('POST', '/organizations', authA, { name: 'Imported Corp' }));
      const tooCostly = await call('POST', '/user_management/users', authA, {
        email: 'costly@imported.example',
        password_hash: `$scrypt$ln=18,r=32,p=1$${salt.toString('base64')}$${key.toString('base64')}`,
        password_hash_type: 'scrypt',
      });
      expect(tooCostly.status).toBe(422);

      // Users with the costliest allowed hash, each with a widget token (UserSecurity's "Change password").
      const tokens: string[] = [];
      for (let i = 0; i < USERS; i++) {
        const user = await call('POST', '/user_management/users', authA, {
          email: `imported-${i}@imported.example`,
          password_hash: hash,
          password_hash_type: 'scrypt',
        });
        expect(user.status, user.body).toBe(201);
        const userId = json<{ id: string }>(user).id;
        const member = await call('POST', '/user_management/organization_memberships', authA, {
          user_id: userId,
          organization_id: org.id,
        });
        expect(member.status).toBe(201);
        const issued = await call('POST', '/widgets/token', authA, {
          organization_id: org.id,
          user_id: userId,
          scopes: [],
        });
        expect(issued.status).toBe(201);
        tokens.push(json<{ token: string }>(issued).token);
      }
      const bOrg = await call('POST', '/organizations', authB, { name: 'Bystander Corp' });
      expect(bOrg.status).toBe(201);
      const readB = () => call('GET', '/organizations?limit=10', authB);
      await fire(100, 4, readB);
      const quiet = await fire(200, 4, readB);
      const before = rssMb(pid);

      // Environment A: every user's five guesses a window (each a check at the bound: a wrong
      // current password is checked in full), and users created with passwords, all at once;
      // environment B reads throughout. RSS is sampled every 100 ms.
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMb(pid));
      }, 100);
      let hostileDone = false;
      const started = performance.now();
      const hostile = Promise.all([
        fire(USERS * 5, 16, (i) =>
          call(
            'POST',
            '/_widgets/UserProfile/update-password',
            { Authorization: `Bearer ${tokens[i % USERS]}`, ...WIDGET_HEADERS },
            { currentPassword: `guess ${i}`, newPassword: 'a brand new password' },
          ),
        ),
        fire(24, 8, (i) =>
          call('POST', '/user_management/users', authA, {
            email: `created-${i}@imported.example`,
            password: `a fresh password ${i}`,
          }),
        ),
      ]).finally(() => {
        hostileDone = true;
      });
      const loaded: Answer[] = [];
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          // At most 3,000: B's own rate limit (6,000 requests a minute per key) must not answer for it.
          while (!hostileDone && loaded.length < 3_000) loaded.push(await readB());
        }),
      );
      const [checks, creates] = await hostile;
      const hostileMs = Math.round(performance.now() - started);
      clearInterval(sampler);
      const after = rssMb(pid);

      const checkMs = checks.map((a) => a.ms).sort((x, y) => x - y);
      console.info(
        `[hostile-load-passwords] scrypt N=2^${LOG_N} r=${R} p=1 (${MAX_SCRYPT_MIB} MiB): ${hashMs} ms per hash in the test process; ` +
          `A: checks ${JSON.stringify(tally(checks))}, creates ${JSON.stringify(tally(creates))} in ${hostileMs} ms ` +
          `(check median ${Math.round(checkMs[Math.floor(checkMs.length / 2)] ?? 0)} ms, p95 ${p95(checks)} ms); ` +
          `B reads p95 quiet ${p95(quiet)} ms, under load ${p95(loaded)} ms (${loaded.length} reads, ${JSON.stringify(tally(loaded))}); ` +
          `RSS before ${before} MB, peak ${peak} MB (+${Math.round((peak - before) * 10) / 10} MB, limit ${RSS_GROWTH_LIMIT_MB} MB), after ${after} MB`,
      );
      // A's own flood is bounded by its share of the pool: each check runs and answers 400 (a
      // wrong password, checked in full), or waits too long for a slot and is refused at once
      // (429, its guess given back); never a 503, never a crash.
      expect(Object.keys(tally(checks)).filter((s) => s !== '400' && s !== '429')).toEqual([]);
      expect(checks.filter((a) => a.status === 400).length).toBeGreaterThan(0);
      // Creates with a password share A's slots with its checks: made (201) or refused at once (429).
      expect(Object.keys(tally(creates)).filter((s) => s !== '201' && s !== '429')).toEqual([]);
      for (const a of [...checks, ...creates].filter((a) => a.status === 429)) {
        expect(json<{ code: string }>(a).code).toMatch(/^rate_limit_exceeded$/);
      }
      // B: every read answered.
      expect(loaded.length).toBeGreaterThan(0);
      expect(loaded.every((a) => a.status === 200)).toBe(true);
      expect((await call('GET', '/healthz', {})).status).toBe(200);
      expect(peak - before).toBeLessThan(RSS_GROWTH_LIMIT_MB);
      expect(server.exitCode()).toBeNull();
    },
    BUDGET_MS,
  );
});
