import type { IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { clientAddressOf, trustedProxies } from '@atrium/rest-facade';
import { ensureAdminToken, newCaches, signInToConsole } from '@atrium/routers';
import { loadConfig } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { adminTokenFor, startOwnApp } from './own-app.ts';

/**
 * Issue #34 item 4: bogus credentials from one address (behind a proxy or NAT, many callers)
 * must never get a valid credential refused there. Each app here has caches of its own, so
 * every valid credential is one it has never seen, as after a restart.
 */

interface Answer {
  status: number;
  body: string;
}

/** A request sent from a chosen loopback address (all of 127.0.0.0/8 is local on Linux). */
function callFrom(
  url: string,
  localAddress: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: payload === undefined ? 'GET' : 'POST',
        localAddress,
        agent: false,
        headers: payload === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A well-formed API key that no environment holds. */
const bogusKey = (i: number) => `sk_test_${`flood${i}`.padEnd(40, 'Q')}`;

/** `count` calls, `concurrency` at a time; the statuses tallied. */
async function flood(count: number, concurrency: number, make: (i: number) => Promise<Answer>) {
  const statuses: Record<number, number> = {};
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const { status } = await make(next++);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return statuses;
}

describe('a bogus-key flood from one address', () => {
  const FLOODED = '127.0.0.60';
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let deps: TestEnvironment['deps'];

  beforeAll(async () => {
    env = await newEnvironment();
    deps = { ...env.deps, caches: newCaches() };
    // The default limits: 300 failed credentials per address per 60 s.
    own = await startOwnApp(deps, { accessLog: false });
    const statuses = await flood(320, 16, (i) =>
      callFrom(own.url, FLOODED, '/organizations', { Authorization: `Bearer ${bogusKey(i)}` }),
    );
    expect(statuses).toEqual({ 401: 300, 429: 20 });
  });
  afterAll(() => own.close());

  it('serves a valid key this process has never seen, from the flooded address', async () => {
    const fresh = await newEnvironment();
    for (const key of [env.apiKey, fresh.apiKey]) {
      const res = await callFrom(own.url, FLOODED, '/organizations', { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ object: 'list' });
    }
    // The bogus ones are still refused there, and a revoked key is not let through.
    const again = await callFrom(own.url, FLOODED, '/organizations', { Authorization: `Bearer ${bogusKey(999)}` });
    expect(again.status).toBe(429);
  });

  it('serves widget tokens, GraphQL, client tRPC and console sessions from the flooded address', async () => {
    const widget = await clientSetup(env);
    const bearer = { Authorization: `Bearer ${widget.token}`, ...WIDGET_HEADERS };
    const me = await callFrom(own.url, FLOODED, '/_widgets/UserProfile/me', bearer);
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body)).toMatchObject({ id: widget.userId });
    const graphql = await callFrom(own.url, FLOODED, '/client/graphql', bearer, { query: '{ sessions { id } }' });
    expect(graphql.status).toBe(200);
    expect(JSON.parse(graphql.body).errors).toBeUndefined();
    const trpc = await callFrom(own.url, FLOODED, '/trpc/client.organizations', bearer);
    expect(trpc.status).toBe(200);

    const adminToken = adminTokenFor('flood');
    await ensureAdminToken(deps, adminToken);
    const session = await signInToConsole(deps, adminToken);
    const consoleHeaders = { Cookie: `atrium_console=${session.secret}`, 'x-csrf-token': session.csrf_token };
    const types = await callFrom(own.url, FLOODED, '/trpc/admin.connections.types', consoleHeaders);
    expect(types.status).toBe(200);
    // A console cookie that opens nothing is a failed credential: the flooded address's 429.
    const forged = { Cookie: `atrium_console=atrium_console_${'x'.repeat(43)}`, 'x-csrf-token': 'x' };
    expect((await callFrom(own.url, FLOODED, '/trpc/admin.connections.types', forged)).status).toBe(429);
    // So is a token that is not signed by the environment.
    const [head, , sig] = widget.token.split('.');
    const tampered = `${head}.${Buffer.from('{"sub":"x"}').toString('base64url')}.${sig}`;
    const refused = await callFrom(own.url, FLOODED, '/_widgets/UserProfile/me', {
      ...bearer,
      Authorization: `Bearer ${tampered}`,
    });
    expect(refused.status).toBe(429);
  });
});

describe('the client address behind trusted proxies (ATRIUM_TRUSTED_PROXIES)', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>>;

  beforeAll(async () => {
    const env = await newEnvironment();
    own = await startOwnApp(
      { ...env.deps, caches: newCaches() },
      { accessLog: false, trustedProxies: ['127.0.0.70', '127.0.1.0/24'], rateLimit: { unauthenticated: 2 } },
    );
  });
  afterAll(() => own.close());

  const anonymous = (from: string, forwardedFor?: string) =>
    callFrom(own.url, from, '/organizations', forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}).then(
      (answer) => answer.status,
    );

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await anonymous('127.0.0.71', `198.51.100.${i}`));
    expect(statuses).toEqual([401, 401, 429]);
  });

  it('counts each client behind a trusted proxy on its own, by the right-most untrusted hop', async () => {
    expect([await anonymous('127.0.0.70', '203.0.113.1'), await anonymous('127.0.0.70', '203.0.113.1')]).toEqual([
      401, 401,
    ]);
    // Another client behind the same proxy has a budget of its own.
    expect(await anonymous('127.0.0.70', '203.0.113.2')).toBe(401);
    expect(await anonymous('127.0.0.70', '203.0.113.1')).toBe(429);
    // Hops left of the right-most untrusted one are the client's own words: a rotating spoof changes nothing.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await anonymous('127.0.0.70', `10.9.9.${i}, 203.0.113.5, 127.0.1.9`));
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('clientAddressOf and the trusted-proxy predicate', () => {
  const req = (remoteAddress: string, forwardedFor?: string) =>
    ({
      socket: { remoteAddress },
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    }) as unknown as IncomingMessage;
  const trusted = trustedProxies(['10.0.0.0/8', '::1', '192.0.2.7']);

  it.each([
    ['a direct peer', req('198.51.100.4', '1.1.1.1'), '198.51.100.4'],
    ['an IPv4-mapped peer', req('::ffff:198.51.100.4'), '198.51.100.4'],
    ['a trusted proxy without the header', req('10.1.2.3'), '10.1.2.3'],
    ['a trusted proxy', req('10.1.2.3', '203.0.113.9'), '203.0.113.9'],
    ['two trusted proxies', req('::1', '1.2.3.4, 203.0.113.9, 10.0.0.1'), '203.0.113.9'],
    ['a hop with a port', req('192.0.2.7', '[2001:db8::1]:443'), '2001:db8::1'],
    ['a hop that is not an address', req('10.0.0.2', 'unknown'), '10.0.0.2'],
    ['only trusted hops', req('10.0.0.2', '10.0.0.3'), '10.0.0.3'],
  ])('%s', (_label, incoming, expected) => {
    expect(clientAddressOf(incoming, trusted)).toBe(expected);
  });

  it('is read from ATRIUM_TRUSTED_PROXIES, and a bad entry stops the configuration', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ ATRIUM_TRUSTED_PROXIES: '10.0.0.0/8, ::1' }).trustedProxies).toEqual(['10.0.0.0/8', '::1']);
    expect(() => loadConfig({ ATRIUM_TRUSTED_PROXIES: '10.0.0.0/8,proxy.internal' })).toThrow(/proxy\.internal/);
  });
});
