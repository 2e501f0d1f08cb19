import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpClient, newEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

/** Holds one of the app's turns, as a running request would, until `close` is emitted. */
const holder = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse & EventEmitter;

describe('requests running at once (MAX_IN_FLIGHT)', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>> | undefined;
  afterEach(async () => {
    await own?.close();
    own = undefined;
  });

  it('queues a request while the turns are taken, refuses past the queue with 503, and stores nothing', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 1, timeoutMs: 60_000 } });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    // The first JWKS read creates the environment's signing key; later ones store nothing.
    expect((await client.get(`/sso/jwks/${env.clientId}`)).status).toBe(200);
    const before = await snapshot(env);

    const busy = holder();
    expect(inFlight.enter(busy)).toEqual({ ok: true });
    const waiting = client.post('/organizations', { name: 'Waited its turn' });
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 1 }));

    const refused = await client.post('/organizations', { name: 'Refused' });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const trpc = await client.get(`/trpc/organizations.list?input=${encodeURIComponent('{}')}`);
    expect(trpc.status).toBe(503);
    expect(trpc.headers.get('retry-after')).toBe('1');
    expect(trpc.body.error.data).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      httpStatus: 503,
      contract: { status: 503, body: { code: 'service_unavailable', message: expect.any(String) } },
    });
    // JWKS is answered from memory and takes no turn.
    expect((await client.get(`/sso/jwks/${env.clientId}`)).status).toBe(200);
    expect(await snapshot(env)).toEqual(before);

    busy.emit('close');
    const created = await waiting;
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'organization', name: 'Waited its turn' });
    expect(before.organizations).toBe(0);
    expect(await snapshot(env)).toEqual({ ...before, organizations: 1, events: 1 });
    // The turn is given back when the response closes, which may follow the client's read.
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));

    const metrics = await own.app.metrics.registry.metrics();
    expect(metrics).toContain('atrium_http_shed_total{reason="queue_full"} 2');
    // A refusal at capacity is not the database being down.
    expect(metrics).toContain('atrium_database_unavailable_total 0');
    expect(metrics).toContain('atrium_http_in_flight 0');
    expect(metrics).toContain('atrium_http_queued 0');
  });

  it('refuses a request that waited past QUEUE_TIMEOUT_MS', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 10, timeoutMs: 1 } });
    const busy = holder();
    own.app.inFlight?.enter(busy);
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const before = await snapshot(env);
    const res = await client.post('/organizations', { name: 'Too late' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect(await snapshot(env)).toEqual(before);
    expect(await own.app.metrics.registry.metrics()).toContain('atrium_http_shed_total{reason="timeout"} 1');
    busy.emit('close');
    expect((await client.get('/organizations')).status).toBe(200);
  });

  it('weighs pages of more than 25 items, over REST and tRPC, and serves them in arrival order', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 4, queue: 10, timeoutMs: 60_000 } });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const busy = holder();
    inFlight.enter(busy);
    // One turn taken, three free: a page of 100 (weight 4) waits, and so does what comes after it.
    const page = client.get('/organizations?limit=100');
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 1 }));
    const trpcPage = client.get(`/trpc/organizations.list?input=${encodeURIComponent('{"limit":60}')}`);
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 2 }));
    const small = client.get('/organizations?limit=25');
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 3 }));
    busy.emit('close');
    const [a, b, c] = await Promise.all([page, trpcPage, small]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(a.body).toMatchObject({ object: 'list', data: [] });
    expect(b.body.result.data).toMatchObject({ object: 'list', data: [] });
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));
  });

  it("leaves unreadable tRPC input to tRPC's own error, and gives the turn back", async () => {
    const env = await newEnvironment();
    const path = `/trpc/organizations.list?input=${encodeURIComponent('{"limit":')}`;
    const answers = [];
    for (const inFlight of [{ max: 4, queue: 10, timeoutMs: 60_000 }, false as const]) {
      own = await startOwnApp(env.deps, { inFlight });
      const res = await new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` }).get(path);
      answers.push({ status: res.status, code: res.body.error.data.code, message: res.body.error.message });
      if (inFlight) await vi.waitFor(() => expect(own?.app.inFlight?.load).toEqual({ running: 0, waiting: 0 }));
      await own.close();
      own = undefined;
    }
    expect(answers[0]).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    // The same answer as without the limit.
    expect(answers[0]).toEqual(answers[1]);
  });

  it('is off with inFlight: false', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: false });
    expect(own.app.inFlight).toBeUndefined();
    const res = await new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` }).get('/organizations');
    expect(res.status).toBe(200);
  });
});
