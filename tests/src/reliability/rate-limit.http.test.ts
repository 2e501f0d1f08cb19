import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

describe('rate limits per API key', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let env: TestEnvironment;
  let client: HttpClient;

  beforeAll(async () => {
    env = await newEnvironment();
    own = await startOwnApp(env.deps, { rateLimit: { requests: 5, windowSeconds: 60, organizationDeletes: 2 } });
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
