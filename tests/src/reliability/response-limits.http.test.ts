import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

/** `/trpc/organizations.list,…?batch=1&input=…`: `n` calls, each asking for a page of `limit`. */
const listBatch = (n: number, limit: number) =>
  `/trpc/${Array(n).fill('organizations.list').join(',')}?batch=1&input=${encodeURIComponent(
    JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, { limit }]))),
  )}`;

/** 50 metadata values of 600 characters: the contract's largest organization (~31 KB of JSON). */
const bigMetadata = (tag: string) =>
  Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key_${i}`, `${tag}${i}`.padEnd(600, 'x')]));

/** Every call of a tRPC batch answered with the same contract error. */
function expectEachRefused(body: unknown, n: number, status: number, code: string): void {
  expect(body).toHaveLength(n);
  for (const item of body as Array<{ error: { data: unknown } }>) {
    expect(item.error.data).toMatchObject({ httpStatus: status, contract: { status, body: { code } } });
  }
}

/**
 * The crash of issue #19 item 1 at a small scale: an environment of organizations carrying the
 * largest metadata, read by a batch of 60 page-of-100 calls, which once held every result at once.
 */
describe('tRPC batches are bounded', () => {
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let client: HttpClient;

  beforeAll(async () => {
    env = await newEnvironment();
    for (let i = 0; i < 12; i++) {
      await env.caller.organizations.create({ name: `Heavy ${i}`, metadata: bigMetadata(`o${i}`) });
    }
    own = await startOwnApp(env.deps, { rateLimit: false });
    client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
  });
  afterAll(() => own.close());

  it('refuses a batch of 60 calls with 400 batch_too_large before any call runs', async () => {
    const res = await client.get(listBatch(60, 100));
    expect(res.status).toBe(400);
    expectEachRefused(res.body, 60, 400, 'batch_too_large');
    expect(res.body[0].error.data.contract.body.message).toMatch(/at most 10 calls/);
    // A batch of 11 writes is refused the same way, and nothing of it is stored.
    const before = await snapshot(env);
    const writes = await client.post(
      `/trpc/${Array(11).fill('organizations.create').join(',')}?batch=1`,
      Object.fromEntries(Array.from({ length: 11 }, (_, i) => [i, { name: `Batched ${i}` }])),
    );
    expect(writes.status).toBe(400);
    expectEachRefused(writes.body, 11, 400, 'batch_too_large');
    expect(await snapshot(env)).toEqual(before);
  });

  it('still answers a batch of 10 calls', async () => {
    const res = await client.get(listBatch(10, 10));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(10);
    for (const item of res.body) expect(item.result.data.data).toHaveLength(10);
  });

  it('charges a batch the sum of its calls’ weights, and refuses one heavier than the in-flight limit', async () => {
    // 10 pages of 100 weigh 10 × 4 = 40, over the default 32 running at once.
    const heavy = await client.get(listBatch(10, 100));
    expect(heavy.status).toBe(400);
    expectEachRefused(heavy.body, 10, 400, 'batch_too_large');
    expect(heavy.body[0].error.data.contract.body.message).toMatch(/weighs 40 and at most 32/);
    // 8 pages of 100 weigh 32: they fit, and each call answers its page.
    const fits = await client.get(listBatch(8, 100));
    expect(fits.status).toBe(200);
    for (const item of fits.body) expect(item.result.data.data).toHaveLength(12);
  });
});

describe('a response is bounded in bytes on every surface', () => {
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let client: HttpClient;
  // Five organizations of ~31 KB fit; a page of 12 (~375 KB) does not.
  const MAX = 200_000;

  beforeAll(async () => {
    env = await newEnvironment();
    for (let i = 0; i < 12; i++) {
      await env.caller.organizations.create({ name: `Large ${i}`, metadata: bigMetadata(`l${i}`) });
    }
    own = await startOwnApp(env.deps, { rateLimit: false, maxResponseBytes: MAX });
    client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
  });
  afterAll(() => own.close());

  it('answers a REST page over the limit with 413 response_too_large, and a smaller page in full', async () => {
    const res = await client.get('/organizations?limit=12');
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 'response_too_large', message: expect.stringMatching(/smaller page/) });
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
    const small = await client.get('/organizations?limit=5');
    expect(small.status).toBe(200);
    expect(small.body.data).toHaveLength(5);
    expect(small.text.length).toBeLessThanOrEqual(MAX);
  });

  it("answers a /trpc response over the limit with 413 in tRPC's shape, single or batched", async () => {
    const batch = await client.get(listBatch(2, 12));
    expect(batch.status).toBe(413);
    expectEachRefused(batch.body, 2, 413, 'response_too_large');
    const single = await client.get(`/trpc/organizations.list?input=${encodeURIComponent('{"limit":12}')}`);
    expect(single.status).toBe(413);
    expect(single.body.error.data).toMatchObject({
      httpStatus: 413,
      contract: { status: 413, body: { code: 'response_too_large' } },
    });
    // Under the limit, the same procedure answers.
    const fits = await client.get(listBatch(1, 5));
    expect(fits.status).toBe(200);
    expect(fits.body[0].result.data.data).toHaveLength(5);
  });
});
