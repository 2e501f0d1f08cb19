import { request } from 'node:http';
import { apiKeyCache, authenticateApiKeyWithId, ensureAdminToken } from '@atrium/routers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { adminTokenFor, startOwnApp } from './own-app.ts';

/** A GET sent from a chosen loopback address (all of 127.0.0.0/8 is local on Linux). */
function getFrom(
  url: string,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  retryAfter: string | undefined;
  policy: string | undefined;
  remaining: string | undefined;
}> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
          policy: res.headers['ratelimit-policy'] as string | undefined,
          remaining: res.headers['ratelimit-remaining'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** A well-formed API key that no environment holds. */
const bogusKey = (i: number) => `sk_test_${`bogus${i}`.padEnd(40, 'Q')}`;

describe('rate limits per API key', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let env: TestEnvironment;
  let client: HttpClient;

  beforeAll(async () => {
    env = await newEnvironment();
    own = await startOwnApp(env.deps, {
      rateLimit: { requests: 5, windowSeconds: 60, organizationDeletes: 2, unauthenticated: 5 },
    });
    client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
  });
  afterAll(() => own.close());

  it('counts down in RateLimit-* headers, then answers 429 with Retry-After and the contract body', async () => {
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 5; i++) {
      const res = await client.get('/organizations');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      expect(res.headers.get('ratelimit-policy')).toBe('5;w=60');
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      seen.push([res.status, res.headers.get('ratelimit-remaining')]);
    }
    expect(seen.map(([, remaining]) => remaining)).toEqual(['4', '3', '2', '1', '0']);
    const before = await snapshot(env);
    const limited = await client.post('/organizations', { name: 'Too many' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ code: 'rate_limit_exceeded', message: expect.any(String) });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(await snapshot(env)).toEqual(before);
  });

  it('counts each API key on its own', async () => {
    const other = await newEnvironment();
    const res = await new HttpClient(own.url, { Authorization: `Bearer ${other.apiKey}` }).get('/organizations');
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('holds organization deletes to their stricter limit', async () => {
    const other = await newEnvironment();
    const c = new HttpClient(own.url, { Authorization: `Bearer ${other.apiKey}` });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await c.delete('/organizations/org_01HZZZZZZZZZZZZZZZZZZZZZZZ')).status);
    expect(statuses).toEqual([404, 404, 429]);
    // Reads of the same key still pass: only deletes hit their limit.
    expect((await c.get('/organizations')).status).toBe(200);
  });

  it('limits unauthenticated callers by address', async () => {
    const anon = new HttpClient(own.url);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await anon.get('/organizations')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});

describe('rate limits count the authenticated key, and failures per address in a bounded store', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let deps: TestEnvironment['deps'];
  /** Queries this app's authentication has sent (its database handle counts `select`s). */
  let selects = 0;

  beforeAll(async () => {
    const shared = (await newEnvironment()).deps;
    const db = new Proxy(shared.db, {
      get(target, key, receiver) {
        if (key === 'select') selects += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    deps = { ...shared, db };
    own = await startOwnApp(deps, {
      rateLimit: { requests: 3, windowSeconds: 60, organizationDeletes: 2, unauthenticated: 4, maxAddresses: 5 },
    });
  });
  afterAll(() => own.close());

  const spellings = (key: string) => [`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`];

  it.each([0, 1, 2, 3])(
    'counts every spelling of the Bearer scheme against one key (spelling %i last)',
    async (last) => {
      const env = await newEnvironment();
      const all = spellings(env.apiKey);
      const order = [...all.filter((_, i) => i !== last), all[last]!];
      const statuses: number[] = [];
      for (const authorization of order) {
        statuses.push((await new HttpClient(own.url, { Authorization: authorization }).get('/organizations')).status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    },
  );

  it('keeps the store flat under distinct bogus keys, and refuses them with 429 past the failure limit', async () => {
    const keysBefore = own.app.limits?.trackedKeys;
    const cachedBefore = apiKeyCache(deps).size;
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 40; i++) {
      const path = i % 2 === 0 ? '/organizations' : '/trpc/organizations.list';
      const res = await getFrom(own.url, path, '127.0.0.2', { Authorization: `Bearer ${bogusKey(i)}` });
      statuses.push(res.status);
      retryAfter = res.retryAfter ?? retryAfter;
    }
    // REST and /trpc share the address's bucket: 4 failures answered, the rest refused.
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    expect(new Set(statuses.slice(4))).toEqual(new Set([429]));
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Forty keys, one address: nothing was stored per key, neither here nor in the API-key cache.
    expect(own.app.limits?.trackedKeys).toBe(keysBefore);
    expect(apiKeyCache(deps).size).toBe(cachedBefore);
    expect(own.app.limits?.trackedAddresses).toBe(1);
    // Twenty more addresses: the store keeps at most its cap of five.
    for (let n = 10; n < 30; n++) {
      expect((await getFrom(own.url, '/organizations', `127.0.0.${n}`)).status).toBe(401);
      expect(own.app.limits?.trackedAddresses).toBeLessThanOrEqual(5);
    }
    expect(own.app.limits?.trackedAddresses).toBe(5);
    expect(own.app.limits?.trackedKeys).toBe(keysBefore);
  });

  it('does not starve an authenticated key, from another address or from the flooded one', async () => {
    const keysBefore = own.app.limits?.trackedKeys ?? 0;
    for (let i = 0; i < 10; i++)
      await getFrom(own.url, '/organizations', '127.0.0.3', { Authorization: 'Bearer junk' });
    expect((await getFrom(own.url, '/organizations', '127.0.0.3')).status).toBe(429);
    const env = await newEnvironment();
    const fromOther = await getFrom(own.url, '/organizations', '127.0.0.4', { Authorization: `Bearer ${env.apiKey}` });
    expect(fromOther).toMatchObject({ status: 200, policy: '3;w=60' });
    const fromFlooded = await getFrom(own.url, '/organizations', '127.0.0.3', {
      Authorization: `Bearer ${env.apiKey}`,
    });
    expect(fromFlooded.status).toBe(200);
    // Counted in this process's store, or (on PostgreSQL) in the shared table, never in memory.
    const counted = own.app.limits?.store === 'memory' ? 1 : 0;
    expect(own.app.limits?.trackedKeys).toBe(keysBefore + counted);
  });

  it('counts an admin token over /trpc against the token, not the address', async () => {
    // A token of its own: on PostgreSQL its count is shared with every process (and test file) using it.
    const token = adminTokenFor('ratelimit');
    await ensureAdminToken(deps, token);
    const admin = { Authorization: `Bearer ${token}` };
    const first = await getFrom(own.url, '/trpc/admin.connections.types', '127.0.0.6', admin);
    expect(first).toMatchObject({ status: 200, policy: '3;w=60' });
    const spelled = { Authorization: admin.Authorization.replace('Bearer ', 'bearer  ') };
    const statuses = [first.status];
    for (let i = 0; i < 3; i++)
      statuses.push((await getFrom(own.url, '/trpc/admin.connections.types', '127.0.0.7', spelled)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // The addresses it came from were not charged.
    expect((await getFrom(own.url, '/organizations', '127.0.0.6')).status).toBe(401);
  });

  it('leaves the public JWKS uncounted: it is answered from memory, as cheaply as a refusal', async () => {
    const env = await newEnvironment();
    for (let i = 0; i < 6; i++) {
      const jwks = await getFrom(own.url, `/sso/jwks/${env.clientId}`, '127.0.0.5');
      expect(jwks).toMatchObject({ status: 200, policy: undefined });
    }
    // The address was not charged: its failure budget is whole.
    expect((await getFrom(own.url, '/organizations', '127.0.0.5')).remaining).toBe('3');
  });

  it('looks unknown keys up in batches, malformed ones not at all, and serves a key never seen from a flooded address', async () => {
    const env = await newEnvironment();
    for (let i = 0; i < 4; i++)
      await getFrom(own.url, '/organizations', '127.0.0.41', { Authorization: 'Bearer junk' });
    // Malformed credentials cost no query, and the address is out of failures.
    const before = selects;
    for (let i = 0; i < 20; i++) {
      const res = await getFrom(own.url, '/organizations', '127.0.0.41', { Authorization: `Bearer junk${i}` });
      expect(res.status).toBe(429);
    }
    expect(selects - before).toBe(0);
    // A hundred unknown keys at once: one query in flight at a time, the rest wait and go in one.
    const batched = selects;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => authenticateApiKeyWithId(deps, `Bearer ${bogusKey(100 + i)}`)),
    );
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason.status === 401)).toBe(true);
    expect(selects - batched).toBeLessThanOrEqual(2);
    // Well-formed bogus keys are refused there; a key this process has never seen goes on.
    const bogus = await getFrom(own.url, '/organizations', '127.0.0.41', { Authorization: `Bearer ${bogusKey(300)}` });
    expect(bogus.status).toBe(429);
    const fresh = await getFrom(own.url, '/organizations', '127.0.0.41', { Authorization: `Bearer ${env.apiKey}` });
    expect(fresh.status).toBe(200);
  });
});

describe('rate limits over tRPC', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>>;

  beforeAll(async () => {
    own = await startOwnApp((await newEnvironment()).deps, {
      rateLimit: { requests: 5, windowSeconds: 60, organizationDeletes: 2 },
    });
  });
  afterAll(() => own.close());

  const list = (n: number) =>
    `/trpc/${Array(n).fill('organizations.list').join(',')}?batch=1&input=${encodeURIComponent(
      JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))),
    )}`;

  it("shares the key's limit with REST, counts each call of a batch, and refuses in tRPC's shape", async () => {
    const env = await newEnvironment();
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    expect((await client.get('/organizations')).headers.get('ratelimit-remaining')).toBe('4');
    const batch = await client.get(list(2));
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(2);
    expect(batch.headers.get('ratelimit-remaining')).toBe('2');
    const before = await snapshot(env);
    const limited = await client.post('/trpc/organizations.create,organizations.create,organizations.create?batch=1', {
      0: { name: 'a' },
      1: { name: 'b' },
      2: { name: 'c' },
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body).toHaveLength(3);
    for (const item of limited.body) {
      expect(item.error.data).toMatchObject({
        code: 'TOO_MANY_REQUESTS',
        httpStatus: 429,
        contract: { status: 429, body: { code: 'rate_limit_exceeded', message: expect.any(String) } },
      });
    }
    // Nothing was created, and REST sees the same exhausted key.
    expect(await snapshot(env)).toEqual(before);
    expect((await client.get('/organizations')).status).toBe(429);
  });

  it('holds organizations.delete to the delete limit', async () => {
    const env = await newEnvironment();
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await client.post('/trpc/organizations.delete', { id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ' })).status);
    }
    expect(statuses).toEqual([404, 404, 429]);
    expect((await client.get(list(1))).status).toBe(200);
  });
});

describe('rate limits by default', () => {
  it('allow 6,000 requests per 60 s and 50 organization deletes', async () => {
    const env = await newEnvironment();
    const res = await env.http.get('/organizations');
    expect(res.headers.get('ratelimit-policy')).toBe('6000;w=60');
    const del = await env.http.delete('/organizations/org_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(del.headers.get('ratelimit-policy')).toBe('50;w=60');
  });
});
