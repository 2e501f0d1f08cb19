import { randomUUID } from 'node:crypto';
import { DEFAULT_RATE_LIMITS, RateLimits } from '@atrium/rest-facade';
import { type ClientCaller, consumeSharedWindow } from '@atrium/routers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, clientSetup } from '../helpers/client.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';

// Client and widget tokens count against their user AND their organization. Over HTTP the store
// is the driver's default (memory on PGlite, the shared table on PostgreSQL); the second suite
// runs the shared store on either driver.

const LIMITS = { requests: 3, clientOrganizationRequests: 5, windowSeconds: 60 };

describe('rate limits of client tokens, per user and per organization', () => {
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;

  beforeAll(async () => {
    env = await newEnvironment();
    own = await startOwnApp(env.deps, { rateLimit: LIMITS, accessLog: false });
  });
  afterAll(() => own?.close());

  /** A client of `own` (not the worker's server) for a token. */
  const onOwn = (token: string) => {
    const client = clientFor({ ...env, world: { ...env.world, url: own.url } }, token);
    return client.http;
  };

  it('a user past its limit gets 429 JSON; the organization bucket then stops its other users', async () => {
    const a = await clientSetup(env);
    const b = await clientSetup(env, { organizationId: a.organizationId });
    const path = '/_widgets/UserManagement/organizations';
    const seen: Array<[number, string | null, string | null]> = [];
    const call = async (token: string) => {
      const res = await onOwn(token).get(path);
      seen.push([res.status, res.headers.get('ratelimit-policy'), res.headers.get('ratelimit-remaining')]);
      return res;
    };
    for (let i = 0; i < 3; i++) await call(a.token);
    const refusedA = await call(a.token);
    expect(refusedA.body).toEqual({ code: 'rate_limit_exceeded', message: expect.any(String) });
    expect(Number(refusedA.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) await call(b.token);
    expect(seen).toEqual([
      [200, '3;w=60', '2'],
      [200, '3;w=60', '1'],
      [200, '3;w=60', '0'],
      [429, '3;w=60', '0'],
      // B has its own 3, but the organization had 5 and A used 3 (its refused call did not count).
      [200, '5;w=60', '1'],
      [200, '5;w=60', '0'],
      [429, '5;w=60', '0'],
    ]);
    // Another organization's user is counted apart.
    const c = await clientSetup(env);
    expect((await onOwn(c.token).get(path)).status).toBe(200);
  });

  it('GraphQL and typed tRPC count in the same buckets, refusing in their own JSON shapes', async () => {
    const a = await clientSetup(env);
    const http = onOwn(a.token);
    expect((await http.post('/client/graphql', { query: '{ clientApiStatus }' })).status).toBe(200);
    expect((await http.get('/trpc/client.organizations')).status).toBe(200);
    expect((await http.get('/_widgets/UserManagement/organizations')).status).toBe(200);
    const gql = await http.post('/client/graphql', { query: '{ clientApiStatus }' });
    expect(gql.status).toBe(429);
    expect(gql.body).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'RATE_LIMITED', status: 429 } }],
    });
    expect(gql.headers.get('retry-after')).toMatch(/^\d+$/);
    const trpc = await http.get('/trpc/client.organizations');
    expect(trpc.status).toBe(429);
    expect(trpc.headers.get('content-type')).toMatch(/json/);
  });
});

describe('the organization bucket in the shared (PostgreSQL) store', () => {
  it('two processes count one user and one organization together', async () => {
    const { deps } = await newEnvironment();
    const shared = { consume: (b: string, p: number, w: number) => consumeSharedWindow(deps, b, p, w) };
    const options = { ...DEFAULT_RATE_LIMITS, ...LIMITS, windowSeconds: 3_600 };
    const processes = [new RateLimits(options, shared), new RateLimits(options, shared)];
    const run = randomUUID();
    const caller = (user: string, organization: string) => ({
      kind: 'client' as const,
      key: `client:${run}:${user}`,
      organizationKey: `client-org:${run}:${organization}`,
      caller: {} as ClientCaller,
    });
    const cost = { requests: 1, organizationDeletes: 0 };
    const outcomes: string[] = [];
    const admit = async (i: number, who: ReturnType<typeof caller>) => {
      // The answer's headers, `[name, value, ...]`, as the pipeline sends them.
      const headers: string[] = [];
      const admission = await processes[i % 2]!.admit(who, headers, cost);
      outcomes.push(`${admission.ok ? 'ok' : 'refused'} ${headers[headers.indexOf('RateLimit-Policy') + 1]}`);
    };
    for (let i = 0; i < 4; i++) await admit(i, caller('a', 'org1'));
    for (let i = 0; i < 3; i++) await admit(i, caller('b', 'org1'));
    await admit(0, caller('c', 'org2'));
    expect(outcomes).toEqual([
      'ok 3;w=3600',
      'ok 3;w=3600',
      'ok 3;w=3600',
      'refused 3;w=3600',
      'ok 5;w=3600',
      'ok 5;w=3600',
      'refused 5;w=3600',
      'ok 3;w=3600',
    ]);
  });
});
