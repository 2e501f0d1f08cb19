import { EventEmitter, once } from 'node:events';
import { type ClientRequest, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { type Admitted, Deadlines, type InFlightLimit } from '@atrium/rest-facade';
import type { Deps, Mailer } from '@atrium/routers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { HttpClient, newEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

/** Takes one of the app's turns, as a running call would, until it is released. */
function holdTurn(inFlight: InFlightLimit | undefined, share = ''): Admitted {
  const res = Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;
  const turn = inFlight?.enter(res, 1, share);
  if (!turn || turn instanceof Promise || !turn.ok) throw new Error('expected a free turn');
  return turn;
}

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

    const busy = holdTurn(inFlight);
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

    busy.release();
    const created = await waiting;
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'organization', name: 'Waited its turn' });
    expect(before.organizations).toBe(0);
    expect(await snapshot(env)).toEqual({ ...before, organizations: 1, events: 1 });
    // The turn is given back when the call ends, which may follow the client's read.
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
    const busy = holdTurn(own.app.inFlight);
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const before = await snapshot(env);
    const res = await client.post('/organizations', { name: 'Too late' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect(await snapshot(env)).toEqual(before);
    expect(await own.app.metrics.registry.metrics()).toContain('atrium_http_shed_total{reason="timeout"} 1');
    busy.release();
    expect((await client.get('/organizations')).status).toBe(200);
  });

  it('weighs pages of more than 25 items, over REST and tRPC, and serves them in arrival order', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 4, queue: 10, timeoutMs: 60_000 } });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const busy = holdTurn(inFlight);
    // One turn taken, three free: a page of 100 (weight 4) waits, and so does what comes after it.
    const page = client.get('/organizations?limit=100');
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 1 }));
    const trpcPage = client.get(`/trpc/organizations.list?input=${encodeURIComponent('{"limit":60}')}`);
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 2 }));
    const small = client.get('/organizations?limit=25');
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 3 }));
    busy.release();
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

/** An answer read to its end, and whether the server closed the connection after it. */
interface Slow {
  status: number;
  headers: IncomingMessage['headers'];
  body: any;
  closed: Promise<void>;
}

/**
 * Sends a request whose body starts (`first`) but never ends (Content-Length promises more):
 * what the server answers, without the client ever finishing the body.
 */
async function slowBody(url: string, path: string, headers: Record<string, string>, first: string): Promise<Slow> {
  const req: ClientRequest = request(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Content-Length': '1000', ...headers },
    agent: false,
  });
  req.on('error', () => {});
  const closed = new Promise<void>((resolve) => req.once('close', () => resolve()));
  req.write(first);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return { status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined, closed };
}

describe('bodies are read before a turn (issue #34)', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>> | undefined;
  afterEach(async () => {
    await own?.close();
    own = undefined;
  });

  it('cuts a body that has not arrived by its deadline with 408 and closes the connection, holding no turn meanwhile', async () => {
    const env = await newEnvironment();
    // The only turn is taken for good: a request that waited for it would never be answered.
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 10, timeoutMs: 60_000 }, bodyTimeoutMs: 300 });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const busy = holdTurn(inFlight);
    const before = await snapshot(env);
    const auth = { Authorization: `Bearer ${env.apiKey}` };

    const rest = await slowBody(own.url, '/organizations', auth, '{"name":');
    expect(rest.status).toBe(408);
    expect(rest.body).toEqual({ code: 'request_timeout', message: expect.any(String) });
    expect(rest.headers.connection).toBe('close');
    await rest.closed;

    const trpc = await slowBody(own.url, '/trpc/organizations.create', auth, '{"name":');
    expect(trpc.status).toBe(408);
    expect(trpc.body.error.data).toMatchObject({
      httpStatus: 408,
      contract: { status: 408, body: { code: 'request_timeout', message: expect.any(String) } },
    });
    expect(trpc.headers.connection).toBe('close');
    await trpc.closed;

    // Nothing ever waited for the turn, nothing was stored, nothing was shed.
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });
    expect(await snapshot(env)).toEqual(before);
    expect(await own.app.metrics.registry.metrics()).not.toContain('atrium_http_shed_total{');
    busy.release();
  });

  it('refuses a GraphQL call that waited past QUEUE_TIMEOUT_MS with 503 SERVICE_UNAVAILABLE (it may be sent again)', async () => {
    const env = await newEnvironment();
    const member = await clientSetup(env);
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 10, timeoutMs: 1 } });
    const busy = holdTurn(own.app.inFlight);
    const widgets = new HttpClient(own.url, { Authorization: `Bearer ${member.token}`, ...WIDGET_HEADERS });
    const res = await widgets.post('/client/graphql', { query: '{ clientApiStatus }' });
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } }],
    });
    busy.release();
    // Once the turn is free the same call is answered.
    const again = await widgets.post('/client/graphql', { query: '{ clientApiStatus }' });
    expect(again.body).toEqual({ data: { clientApiStatus: 'ok' } });
  });

  it('reads a GraphQL body before its turn, and cuts a slow one with 408', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 10, timeoutMs: 60_000 }, bodyTimeoutMs: 300 });
    const busy = holdTurn(own.app.inFlight);
    // Without a client token: refused (403) before the body is read, and before any turn.
    const anonymous = await slowBody(own.url, '/client/graphql', {}, '{"query":');
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.errors[0].extensions).toMatchObject({ status: 403 });
    expect(anonymous.headers.connection).toBe('close');
    expect(own.app.inFlight?.load).toEqual({ running: 1, waiting: 0 });
    busy.release();
  });

  it('refuses a request without a valid credential before reading its body', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { inFlight: { max: 1, queue: 10, timeoutMs: 60_000 }, bodyTimeoutMs: 60_000 });
    const busy = holdTurn(own.app.inFlight);
    const before = await snapshot(env);
    // The bodies never end and the only turn is taken: only a refusal before both answers.
    const missing = await slowBody(own.url, '/organizations', {}, '{"name":');
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ code: 'unauthorized' });
    expect(missing.headers.connection).toBe('close');
    await missing.closed;
    const bogus = await slowBody(
      own.url,
      '/organizations',
      { Authorization: `Bearer sk_test_${'b'.repeat(40)}` },
      '{"name":',
    );
    expect(bogus.status).toBe(401);
    expect(bogus.body).toMatchObject({ code: 'unauthorized' });
    // A widgets path refuses as its procedure does (403 for a missing client token).
    const widget = await slowBody(own.url, '/_widgets/UserProfile/me', {}, '{"first_name":');
    expect(widget.status).toBe(403);
    expect(own.app.inFlight?.load).toEqual({ running: 1, waiting: 0 });
    expect(await snapshot(env)).toEqual(before);
    busy.release();
  });

  it('bounds the bytes of bodies held at once: past the budget 503 at once, and each body gives its bytes back', async () => {
    const env = await newEnvironment();
    own = await startOwnApp(env.deps, { bodyBudgetBytes: 64 });
    const client = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
    const before = await snapshot(env);
    const big = await client.post('/organizations', { name: 'x'.repeat(80) });
    expect(big.status).toBe(503);
    expect(big.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect(big.headers.get('retry-after')).toBe('1');
    expect(await snapshot(env)).toEqual(before);
    // Two bodies of 40 bytes one after the other: the first gave its bytes back when answered.
    for (const name of ['Budget one xxxxxxxxxxxxxxxx', 'Budget two xxxxxxxxxxxxxxxx']) {
      expect((await client.post('/organizations', { name })).status).toBe(201);
    }
    const metrics = await own.app.metrics.registry.metrics();
    expect(metrics).toContain('atrium_http_shed_total{reason="body_budget"} 1');
    expect(metrics).toContain('atrium_database_unavailable_total 0');
  });

  it('gives the next free turn to the environment running less, ahead of another’s queue', async () => {
    const [a, b] = [await newEnvironment(), await newEnvironment()];
    own = await startOwnApp(a.deps, { inFlight: { max: 2, queue: 10, timeoutMs: 60_000 } });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const clientA = new HttpClient(own.url, { Authorization: `Bearer ${a.apiKey}` });
    const clientB = new HttpClient(own.url, { Authorization: `Bearer ${b.apiKey}` });
    // Warm both keys (their first lookup), then let env A hold both turns.
    expect((await clientA.get('/organizations')).status).toBe(200);
    expect((await clientB.get('/organizations')).status).toBe(200);
    const [busy, alsoBusy] = [holdTurn(inFlight, a.environmentId), holdTurn(inFlight, a.environmentId)];
    const order: string[] = [];
    const queued = [];
    for (let i = 0; i < 3; i++) {
      queued.push(clientA.post('/organizations', { name: `A ${i}` }).then((r) => order.push(`A ${r.status}`)));
      await vi.waitFor(() => expect(inFlight.load.waiting).toBe(i + 1));
    }
    queued.push(clientB.get('/organizations').then((r) => order.push(`B ${r.status}`)));
    await vi.waitFor(() => expect(inFlight.load.waiting).toBe(4));
    // One turn frees up: env A still runs one, env B none, so B goes although it came last; and
    // while B runs, both turns are taken, so B is answered before any of A's waiting requests runs.
    busy.release();
    await vi.waitFor(() => expect(order.length).toBeGreaterThan(0), { timeout: 20_000 });
    expect(order[0]).toBe('B 200');
    alsoBusy.release();
    await Promise.all(queued);
    expect(order).toEqual(['B 200', 'A 201', 'A 201', 'A 201']);
  });
});

/**
 * A mailer that holds each send until the test opens its recipient: a call that mails (an
 * invitation) runs until then, however long, without a sleep, on PGlite and PostgreSQL alike.
 */
function gatedMailer() {
  const sent: string[] = [];
  const gates = new Map<string, () => void>();
  const opened = new Set<string>();
  const mailer: Mailer = {
    async send(message) {
      sent.push(message.to);
      if (opened.has(message.to)) return;
      await new Promise<void>((resolve) => gates.set(message.to, resolve));
    },
  };
  const open = (to: string) => {
    opened.add(to);
    gates.get(to)?.();
  };
  const openAll = () => {
    for (const to of gates.keys()) open(to);
  };
  return { mailer, sent, open, openAll };
}

/** The request ids (`X-Request-ID`) whose responses the server has closed (sent, or their caller gone). */
function closedResponses(server: Server): Set<string> {
  const closed = new Set<string>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['x-request-id'];
    if (typeof id === 'string') res.once('close', () => closed.add(id));
  });
  return closed;
}

/** Sends a JSON POST on a connection of its own; `leave` closes it without reading an answer. */
function sendAndLeave(url: string, path: string, headers: Record<string, string>, body: unknown) {
  const text = JSON.stringify(body);
  const req = request(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers },
    agent: false,
  });
  req.on('error', () => {});
  req.end(text);
  return { leave: () => req.destroy() };
}

/**
 * A turn is held until its call ends (answered, failed, or cut at the request deadline), not
 * until its response closes: a caller that sends and disconnects does not free a turn while its
 * call still runs, so the limit bounds the work running.
 */
describe('a turn is held until its call ends', () => {
  let own: Awaited<ReturnType<typeof startOwnApp>> | undefined;
  let openMail: (() => void) | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    openMail?.();
    openMail = undefined;
    await own?.close();
    own = undefined;
  });

  async function start(requestTimeoutMs: number, max: number) {
    const env = await newEnvironment();
    const mail = gatedMailer();
    openMail = mail.openAll;
    const deps: Deps = { ...env.deps, mailer: mail.mailer, config: { ...env.deps.config, requestTimeoutMs } };
    own = await startOwnApp(deps, { inFlight: { max, queue: 10, timeoutMs: 60_000 } });
    const inFlight = own.app.inFlight;
    if (!inFlight) throw new Error('the in-flight limit is on by default');
    const closed = closedResponses(own.server);
    const auth = { Authorization: `Bearer ${env.apiKey}` };
    const client = new HttpClient(own.url, auth);
    const org = await client.post('/organizations', { name: 'Invites' });
    expect(org.status).toBe(201);
    const invite = (email: string) => ({ email, organization_id: org.body.id as string });
    return { env, mail, inFlight, closed, auth, client, invite, url: own.url };
  }

  it('keeps the turn of a call whose caller disconnected: the next request waits until that call ends', async () => {
    const { mail, inFlight, closed, auth, client, invite, url } = await start(60_000, 1);
    const email = uniqueEmail('gone');
    const gone = sendAndLeave(
      url,
      '/user_management/invitations',
      { ...auth, 'X-Request-ID': 'sent-and-gone' },
      invite(email),
    );
    // Its call runs (its mail is being sent, and held); then its caller leaves.
    await vi.waitFor(() => expect(mail.sent).toEqual([email]));
    gone.leave();
    await vi.waitFor(() => expect(closed.has('sent-and-gone')).toBe(true));
    expect(inFlight.load).toEqual({ running: 1, waiting: 0 });

    let answered = false;
    const next = client.get('/organizations').then((res) => {
      answered = true;
      return res;
    });
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 1 }));
    expect(answered).toBe(false);
    // The disconnected call ends: its turn goes to the waiting request.
    mail.open(email);
    expect((await next).status).toBe(200);
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));
    // The call ran to its end although nobody read its answer.
    const listed = await client.get(`/user_management/invitations?email=${encodeURIComponent(email)}`);
    expect(listed.body.data).toHaveLength(1);
  });

  it('gives back at the deadline the turn of a call that never settles, and admits the next request', async () => {
    const { mail, inFlight, closed, client, invite } = await start(2_000, 1);
    const email = uniqueEmail('stuck');
    const stuck = client.post('/user_management/invitations', invite(email), { 'X-Request-ID': 'stuck' });
    await vi.waitFor(() => expect(mail.sent).toEqual([email]));
    const next = client.get('/organizations', { 'X-Request-ID': 'next' });
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 1, waiting: 1 }));
    // Cut at the deadline (503), its turn given back while its mail is still held.
    expect((await stuck).status).toBe(503);
    expect((await next).status).toBe(200);
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));
    expect([closed.has('stuck'), closed.has('next')]).toEqual([true, true]);
    // It settles at last (its outcome dropped: `Deadlines.end` is false): its turn was given back
    // already, and is not given back again (the count would go below 0).
    const ends = vi.spyOn(Deadlines.prototype, 'end');
    mail.open(email);
    await vi.waitFor(() => expect(ends.mock.results).toContainEqual({ type: 'return', value: false }));
    expect(inFlight.load).toEqual({ running: 0, waiting: 0 });
    expect((await client.get('/organizations')).status).toBe(200);
  });

  it('returns the in-flight gauge to 0 after normal, failed, disconnected and cut-off calls, and admits no more than max after', async () => {
    const { env, mail, inFlight, auth, client, invite, url } = await start(2_000, 2);
    const trpc = `/trpc/organizations.list?input=${encodeURIComponent('{}')}`;
    const [gone, cut] = [uniqueEmail('gone'), uniqueEmail('cut')];
    // Normal calls (REST and tRPC), and calls that fail (404, 422, a tRPC 400).
    expect((await client.get('/organizations')).status).toBe(200);
    expect((await client.get(trpc)).status).toBe(200);
    expect((await client.get('/organizations/org_01HZZZZZZZZZZZZZZZZZZZZZZZ')).status).toBe(404);
    expect((await client.post('/organizations', { name: 42 })).status).toBe(422);
    expect((await client.get(`/trpc/organizations.list?input=${encodeURIComponent('{"limit":')}`)).status).toBe(400);
    // A caller that leaves while its call runs, and a call cut at the deadline that never settles.
    const left = sendAndLeave(url, '/user_management/invitations', auth, invite(gone));
    await vi.waitFor(() => expect(mail.sent).toContain(gone));
    left.leave();
    const stuck = await client.post('/user_management/invitations', invite(cut));
    expect(stuck.status).toBe(503);
    mail.open(gone);
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));
    // The cut call still holds its mail; the gauge reads 0.
    expect(mail.sent).toContain(cut);
    const metrics = await own?.app.metrics.registry.metrics();
    expect(metrics).toContain('atrium_http_in_flight 0');
    expect(metrics).toContain('atrium_http_queued 0');
    // With both turns taken and a third request waiting, the cut call settles: it gives nothing
    // back twice, so the third request still waits (no more than max run).
    const [one, two] = [holdTurn(inFlight, env.environmentId), holdTurn(inFlight, env.environmentId)];
    const third = client.get('/organizations');
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 2, waiting: 1 }));
    const ends = vi.spyOn(Deadlines.prototype, 'end');
    mail.open(cut);
    await vi.waitFor(() => expect(ends.mock.results).toContainEqual({ type: 'return', value: false }));
    expect(inFlight.load).toEqual({ running: 2, waiting: 1 });
    one.release();
    expect((await third).status).toBe(200);
    two.release();
    await vi.waitFor(() => expect(inFlight.load).toEqual({ running: 0, waiting: 0 }));
    expect(await own?.app.metrics.registry.metrics()).toContain('atrium_http_in_flight 0');
  });
});
