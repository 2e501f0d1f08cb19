import { Writable } from 'node:stream';
import { createLogger } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

/**
 * Issue #19 item 10: tRPC input that is not JSON answered 400 but was rendered, logged and
 * counted as a server error. It is the caller's mistake: 400 `invalid_json` on every count.
 */
describe('malformed tRPC input', () => {
  const lines: Array<{ level: number; msg: string; status?: number }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let client: HttpClient;

  beforeAll(async () => {
    env = await newEnvironment();
    own = await startOwnApp({ ...env.deps, log: createLogger('debug', stream) });
    client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
  });
  afterAll(() => own.close());

  const invalidJson = { status: 400, body: { code: 'invalid_json', message: expect.any(String) } };

  it('answers 400 invalid_json, logs nothing at error level and counts a 400', async () => {
    const before = await snapshot(env);
    const query = await client.get('/trpc/organizations.list?input=%7Bbad');
    expect(query.status).toBe(400);
    expect(query.body.error.data).toMatchObject({ httpStatus: 400, contract: invalidJson });

    const batch = await client.get('/trpc/organizations.list,organizations.list?batch=1&input=%7Bbad');
    expect(batch.status).toBe(400);
    for (const item of batch.body) expect(item.error.data).toMatchObject({ httpStatus: 400, contract: invalidJson });

    const body = await client.request('POST', '/trpc/organizations.create', {
      raw: '{"name": "Half',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(body.status).toBe(400);
    expect(body.body.error.data).toMatchObject({ httpStatus: 400, contract: invalidJson });

    // A batch whose input is JSON but not an object is the caller's too.
    const notObject = await client.get('/trpc/organizations.list,organizations.list?batch=1&input=%5B1%5D');
    expect(notObject.status).toBe(400);
    for (const item of notObject.body) {
      expect(item.error.data.contract).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    }

    expect(await snapshot(env)).toEqual(before);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.filter((line) => line.msg === 'request').map((line) => line.status)).toEqual([400, 400, 400, 400]);
    const metrics = await own.app.metrics.registry.getSingleMetricAsString('atrium_http_requests_total');
    expect(metrics).toMatch(/method="GET",route="\/trpc",status="400"\} 3/);
    expect(metrics).toMatch(/method="POST",route="\/trpc",status="400"\} 1/);
    expect(metrics).not.toMatch(/status="5\d\d"/);
  });
});
