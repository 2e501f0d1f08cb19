import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Answer, type BuiltServer, bogusKey, caller, startBuiltServer } from '../helpers/built-server.ts';

/**
 * Issue #34 item 4 against the server `npm start` runs (the esbuild bundle, its V8 flags, the
 * default limits: 300 failed credentials per address per 60 s), as hostile-load.test.ts does:
 * one address floods bogus API keys while, from that same address, a fresh API key (made after
 * the flood began), a widget token (REST and GraphQL) and a console session keep working. The
 * bogus ones get 401, then 429. On PostgreSQL the server gets a database of its own; on PGlite,
 * a data directory of its own.
 */
const databaseUrl = inject('databaseUrl');

/** A hang guard, not a speed target. */
const BUDGET_MS = 120_000;
const BOGUS_REQUESTS = 6_000;
/** The flooding address (all of 127.0.0.0/8 is local on Linux); setup calls come from 127.0.0.1. */
const FLOODED = '127.0.0.80';
const fromFlooded = { localAddress: FLOODED };

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let server: BuiltServer;
const call = caller(agent, () => server.base);

const p95 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length * 0.95)] ?? 0) * 10) / 10;
};

describe('a bogus-key flood on the built server', () => {
  let auth: Record<string, string> = {};
  let admin: Record<string, string> = {};

  beforeAll(async () => {
    server = await startBuiltServer({ name: 'hostile-keys', databaseUrl });
    expect(server.apiKey).toBeDefined();
    expect(server.adminToken).toBeDefined();
    auth = { Authorization: `Bearer ${server.apiKey}` };
    admin = { Authorization: `Bearer ${server.adminToken}` };
  }, 90_000);

  afterAll(async () => {
    agent.destroy();
    await server?.stop();
  });

  it(
    'keeps a fresh key, a widget token and a console session working from the flooding address',
    async () => {
      const t0 = Date.now();
      // A member with a widget token, and a console session, made before the flood from 127.0.0.1.
      const org = JSON.parse((await call('POST', '/organizations', auth, { name: 'Flooded' })).body).id as string;
      const user = JSON.parse(
        (await call('POST', '/user_management/users', auth, { email: `flooded-${Date.now()}@example.com` })).body,
      ).id as string;
      expect(
        (await call('POST', '/user_management/organization_memberships', auth, { user_id: user, organization_id: org }))
          .status,
      ).toBe(201);
      const issued = await call('POST', '/widgets/token', auth, {
        organization_id: org,
        user_id: user,
        scopes: ['widgets:users-table:manage'],
      });
      expect(issued.status).toBe(201);
      const widget = {
        Authorization: `Bearer ${JSON.parse(issued.body).token}`,
        'WorkOS-Widgets-Version': '1',
      };
      const signIn = await call('POST', '/console/session', {}, { token: admin.Authorization?.slice(7) });
      expect(signIn.status).toBe(201);
      const consoleHeaders = {
        Cookie: signIn.cookies[0]?.split(';')[0] ?? '',
        'x-csrf-token': JSON.parse(signIn.body).csrf_token as string,
      };

      // The flood: bogus keys from one address, 32 at a time, until it is over.
      const bogus = new Map<number, number>();
      let sent = 0;
      let flooding = true;
      const lane = async () => {
        while (sent < BOGUS_REQUESTS) {
          sent += 1;
          const answer = await call(
            'GET',
            '/organizations',
            { Authorization: `Bearer ${bogusKey()}` },
            undefined,
            fromFlooded,
          );
          bogus.set(answer.status, (bogus.get(answer.status) ?? 0) + 1);
        }
      };
      const flood = Promise.all(Array.from({ length: 32 }, lane)).finally(() => {
        flooding = false;
      });
      // Once the address is out of failures, a key is made (from elsewhere) that no process has seen.
      while (sent < 400) await new Promise((resolve) => setTimeout(resolve, 5));
      const created = await call('POST', '/trpc/admin.apiKeys.create', admin, { environment: 'development' });
      expect(created.status).toBe(200);
      const fresh = { Authorization: `Bearer ${JSON.parse(created.body).result.data.api_key}` };

      // From the flooded address, while the flood goes on: every valid credential is served.
      const probes = { key: [] as number[], widget: [] as number[], graphql: [] as number[], console: [] as number[] };
      const refused: string[] = [];
      const probe = async (name: keyof typeof probes, answer: Promise<Answer>) => {
        const { status, ms, body } = await answer;
        if (status < 200 || status >= 300) refused.push(`${name}: ${status} ${body.slice(0, 200)}`);
        probes[name].push(ms);
      };
      let rounds = 0;
      while (flooding || rounds < 5) {
        rounds += 1;
        await Promise.all([
          probe('key', call('GET', '/organizations?limit=1', fresh, undefined, fromFlooded)),
          probe('widget', call('GET', '/_widgets/UserProfile/me', widget, undefined, fromFlooded)),
          probe('graphql', call('POST', '/client/graphql', widget, { query: '{ sessions { id } }' }, fromFlooded)),
          probe('console', call('GET', '/trpc/admin.connections.types', consoleHeaders, undefined, fromFlooded)),
        ]);
      }
      await flood;

      const figures = Object.fromEntries(
        Object.entries(probes).map(([name, ms]) => [name, { n: ms.length, p95: p95(ms) }]),
      );
      console.info(
        `[hostile-load-keys] ${BOGUS_REQUESTS} bogus keys in ${Date.now() - t0} ms: ${JSON.stringify(Object.fromEntries(bogus))}; ` +
          `valid probes from the same address (ms): ${JSON.stringify(figures)}`,
      );
      expect(refused).toEqual([]);
      expect(rounds).toBeGreaterThanOrEqual(5);
      expect([...bogus.keys()].filter((status) => status !== 401 && status !== 429)).toEqual([]);
      expect(bogus.get(401)).toBe(300);
      expect(bogus.get(429)).toBe(BOGUS_REQUESTS - 300);
      expect((await call('GET', '/healthz', {})).status).toBe(200);
      expect(server.exitCode()).toBeNull();
    },
    BUDGET_MS,
  );
});
