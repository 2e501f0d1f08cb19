import { randomBytes } from 'node:crypto';
import {
  type DbHandle,
  events,
  newId,
  openDb,
  organizationDomains,
  organizations,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import {
  createCaller,
  createInnerContext,
  type Deps,
  newCaches,
  openWebhookSecret,
  sealLegacyWebhookSecrets,
} from '@atrium/routers';
import { WebhookWorker, type WebhookWorkerOptions } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { getWorld, newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * A write records its event as one row, whatever the number of webhook endpoints; the webhook
 * worker's fan-out step turns it into exactly one delivery per enabled, subscribed endpoint.
 */
async function endpoints(env: TestEnvironment, count: number, subscribed: string[] = ['*']) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await env.http.post('/webhook_endpoints', {
      endpoint_url: `https://hooks.example.com/${i}`,
      events: subscribed,
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id as string);
  }
  return ids;
}

/** `count` endpoints written straight to the table (past any quota the API enforces). */
async function manyEndpoints(env: TestEnvironment, count: number): Promise<string[]> {
  const at = new Date(Date.now() - 1_000);
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId('webhookEndpoint'),
    environmentId: env.environmentId,
    url: `https://hooks.example.com/bulk/${i}`,
    secret: `whsec_${i}`,
    events: ['*'],
    createdAt: at,
    updatedAt: at,
  }));
  await env.deps.db.insert(webhookEndpoints).values(rows);
  return rows.map((row) => row.id);
}

function workerFor(env: TestEnvironment, deps: Deps = env.deps, environments = [env.environmentId]) {
  return new WebhookWorker(deps, {
    environmentId: environments,
    purgeEveryMs: Number.POSITIVE_INFINITY,
  });
}

async function eventNamed(env: TestEnvironment, name: string) {
  const rows = await env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), eq(events.event, name)));
  expect(rows).toHaveLength(1);
  return rows[0] as typeof events.$inferSelect;
}

async function deliveriesOfEvent(env: TestEnvironment, eventId: string) {
  return env.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
}

async function deliveryCount(env: TestEnvironment) {
  const rows = await env.deps.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.environmentId, env.environmentId));
  return rows.length;
}

// The worker's world (database, server) starts here, under the hook timeout, not in the first test.
beforeAll(async () => {
  await getWorld();
});

describe('webhook fan-out of an event', () => {
  it.each([
    ['none', 0],
    ['a few', 3],
    ['more than the old single-statement share', 11],
  ])('queues one delivery per subscribed endpoint with %s endpoints (%i), in the worker', async (_label, count) => {
    const env = await newEnvironment();
    const ids = await endpoints(env, count);
    // An endpoint that wants other events, and a disabled one, get nothing.
    const [other] = await endpoints(env, 1, ['user.created']);
    const [disabled] = await endpoints(env, 1);
    await env.deps.db
      .update(webhookEndpoints)
      .set({ status: 'disabled' })
      .where(eq(webhookEndpoints.id, disabled as string));

    const org = await env.caller.organizations.create({ name: 'Fan-out' });
    const domain = await env.caller.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain() });
    // The writes stored their events, marked for fan-out, and no delivery.
    expect(await deliveryCount(env)).toBe(0);
    const created = await eventNamed(env, 'organization.created');
    const claimed = await eventNamed(env, 'organization_domain.created');
    expect(created).toMatchObject({ data: org, organizationId: org.id, fanoutPending: true });
    expect(claimed).toMatchObject({ data: domain, organizationId: org.id, fanoutPending: true });
    // An endpoint made after the events gets none of them.
    const [late] = await endpoints(env, 1);

    const worker = workerFor(env);
    expect(await worker.fanOut()).toBe(2);
    for (const event of [created, claimed]) {
      const rows = await deliveriesOfEvent(env, event.id);
      expect(rows.map((r) => r.endpointId).sort()).toEqual([...ids].sort());
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      for (const row of rows) {
        expect(row.id).toMatch(/^wd_[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(row).toMatchObject({ status: 'pending', nextAttemptAt: event.createdAt, createdAt: event.createdAt });
      }
      expect(rows.some((r) => [other, disabled, late].includes(r.endpointId))).toBe(false);
      expect((await eventNamed(env, event.event)).fanoutPending).toBe(false);
    }
    // A second step finds nothing left: each event is expanded once.
    expect(await worker.fanOut()).toBe(0);
    expect(await deliveryCount(env)).toBe(2 * count);
    // The writes themselves stored what they answered, once.
    const stored = await env.deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.environmentId, env.environmentId));
    expect(stored).toEqual([{ id: org.id }]);
    const domains = await env.deps.db
      .select({ id: organizationDomains.id, token: organizationDomains.verificationToken })
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(domains).toEqual([{ id: domain.id, token: domain.verification_token }]);
  });

  it('a write in an environment with 500 endpoints stores its event and no delivery; one fan-out step queues all 500', async () => {
    const env = await newEnvironment();
    const ids = await manyEndpoints(env, 500);

    const res = await env.http.post('/organizations', { name: 'Busy tenant' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'organization', name: 'Busy tenant' });
    const event = await eventNamed(env, 'organization.created');
    expect(event).toMatchObject({ fanoutPending: true, data: res.body });
    expect(await deliveryCount(env)).toBe(0);

    expect(await workerFor(env).fanOut()).toBe(1);
    const rows = await deliveriesOfEvent(env, event.id);
    expect(rows).toHaveLength(500);
    expect(new Set(rows.map((r) => r.endpointId))).toEqual(new Set(ids));
    expect((await eventNamed(env, 'organization.created')).fanoutPending).toBe(false);
  });

  it('a fan-out step that dies before it commits queues nothing; the next one queues each delivery once', async () => {
    const env = await newEnvironment();
    const ids = await manyEndpoints(env, 3);
    await env.caller.organizations.create({ name: 'Crash' });
    // The step's last statement (clearing the mark) fails, as if the process died there.
    const crashing = new Proxy(env.deps.db, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'transaction') return value;
        return (fn: (tx: unknown) => Promise<unknown>) =>
          target.transaction((tx) =>
            fn(
              new Proxy(tx, {
                get(t, k, r) {
                  if (k === 'update') throw new Error('crashed before commit');
                  return Reflect.get(t, k, r);
                },
              }),
            ),
          );
      },
    });
    const crashed = new WebhookWorker({ ...env.deps, db: crashing }, { environmentId: [env.environmentId] });
    await expect(crashed.fanOut()).rejects.toThrow('crashed before commit');
    expect(await deliveryCount(env)).toBe(0);
    expect((await eventNamed(env, 'organization.created')).fanoutPending).toBe(true);

    expect(await workerFor(env).fanOut()).toBe(1);
    const rows = await deliveriesOfEvent(env, (await eventNamed(env, 'organization.created')).id);
    expect(rows.map((r) => r.endpointId).sort()).toEqual([...ids].sort());
    expect(await workerFor(env).fanOut()).toBe(0);
    expect(await deliveryCount(env)).toBe(3);
  });

  it('on its timer, steps again at once while events wait: one busy environment is not held to one share per interval', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    try {
      await env.caller.webhookEndpoints.create({ endpoint_url: receiver.url, events: ['*'] });
      for (let i = 0; i < 40; i++) await env.caller.organizations.create({ name: `Burst ${i}` });
      // 2 events per step (a quarter of 8) and a one-minute interval: only back-to-back steps
      // expand all 40 within the bound.
      const worker = new WebhookWorker(env.deps, {
        allowPrivate: true,
        environmentId: [env.environmentId],
        fanoutBatch: 8,
        intervalMs: 60_000,
        purgeEveryMs: Number.POSITIVE_INFINITY,
      });
      worker.start();
      try {
        const deadline = Date.now() + 5_000;
        while ((await deliveryCount(env)) < 40 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await worker.stop();
      }
      expect(await deliveryCount(env)).toBe(40);
    } finally {
      await receiver.close();
    }
  });

  it('takes events round-robin by environment: a backlog in one does not delay another', async () => {
    const busy = await newEnvironment();
    const quiet = await newEnvironment();
    await endpoints(busy, 1);
    await endpoints(quiet, 1);
    for (let i = 0; i < 30; i++) await busy.caller.organizations.create({ name: `Backlog ${i}` });
    await quiet.caller.organizations.create({ name: 'Quiet' });

    // A step of 8 events takes at most a quarter (2) from one environment: the quiet one's event is in it.
    const worker = new WebhookWorker(busy.deps, {
      environmentId: [busy.environmentId, quiet.environmentId],
      fanoutBatch: 8,
      purgeEveryMs: Number.POSITIVE_INFINITY,
    });
    expect(await worker.fanOut()).toBe(3);
    expect(await deliveryCount(quiet)).toBe(1);
    expect(await deliveryCount(busy)).toBe(2);
    let steps = 1;
    while ((await worker.fanOut()) > 0) steps += 1;
    expect(steps).toBe(15);
    expect(await deliveryCount(busy)).toBe(30);
  });
});

const databaseUrl = inject('databaseUrl');

// Two processes' workers need two connections: PostgreSQL only (PGlite is one connection).
describe.skipIf(!databaseUrl)('two webhook workers on one PostgreSQL', () => {
  let second: DbHandle;
  beforeAll(async () => {
    second = await openDb({ databaseUrl, poolSize: 5 });
  });
  afterAll(async () => {
    await second.close();
  });

  it('expand each of 120 events exactly once between them', async () => {
    const env = await newEnvironment();
    const ids = await manyEndpoints(env, 5);
    for (let i = 0; i < 120; i++) await env.caller.organizations.create({ name: `Race ${i}` });
    const secondDeps: Deps = { ...env.deps, db: second.db, driver: second.driver, caches: newCaches() };
    const a = workerFor(env);
    const b = workerFor(env, secondDeps);
    for (let round = 0; round < 200; round++) {
      const [x, y] = await Promise.all([a.fanOut(), b.fanOut()]);
      if (x + y === 0) break;
    }
    const rows = await env.deps.db
      .select({ endpointId: webhookDeliveries.endpointId, eventId: webhookDeliveries.eventId })
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.endpointId, ids));
    expect(rows).toHaveLength(600);
    expect(new Set(rows.map((r) => `${r.endpointId}/${r.eventId}`)).size).toBe(600);
    const pending = await env.deps.db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.fanoutPending, true)));
    expect(pending).toEqual([]);
  });
});

describe('webhook delivery', () => {
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  async function receiver(behaviour?: ConstructorParameters<typeof Receiver>[0]) {
    const r = await new Receiver(behaviour).start();
    receivers.push(r);
    return r;
  }

  function workerFor(env: TestEnvironment, options: WebhookWorkerOptions = {}) {
    return new WebhookWorker(env.deps, {
      allowPrivate: true,
      environmentId: env.environmentId,
      purgeEveryMs: Number.POSITIVE_INFINITY,
      ...options,
    });
  }

  const sdk = () =>
    new WorkOS('sk_test_unused', { apiHostname: '127.0.0.1', port: 1, https: false, clientId: 'client_x' });

  async function deliveriesOf(env: TestEnvironment) {
    return env.deps.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.environmentId, env.environmentId))
      .orderBy(asc(webhookDeliveries.id));
  }

  async function attemptsOf(env: TestEnvironment) {
    return env.deps.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.environmentId, env.environmentId))
      .orderBy(asc(webhookAttempts.id));
  }
  it('posts each subscribed event signed so that the official SDK verifies it', async () => {
    const env = await newEnvironment();
    const r = await receiver();
    const endpoint = await env.caller.webhookEndpoints.create({
      endpoint_url: r.url,
      events: ['organization.created'],
    });
    const org = await env.caller.organizations.create({ name: 'Acme' });
    await env.caller.organizations.update({ id: org.id, name: 'Not subscribed' });
    const worker = workerFor(env);

    expect(await worker.tick()).toBe(1);
    await worker.drain();

    expect(r.requests).toHaveLength(1);
    const [request] = r.requests;
    if (!request) throw new Error('no request');
    expect(request.headers['content-type']).toBe('application/json');
    const sigHeader = request.headers['workos-signature'] as string;
    expect(sigHeader).toMatch(/^t=\d{13}, v1=[0-9a-f]{64}$/);
    const event = await sdk().webhooks.constructEvent({ payload: request.body, sigHeader, secret: endpoint.secret });
    expect(event).toMatchObject({ event: 'organization.created', data: { id: org.id, name: 'Acme' } });
    expect(JSON.parse(request.body)).toMatchObject({ object: 'event', event: 'organization.created', data: org });
    // A tampered body or a wrong secret is rejected by the SDK.
    await expect(
      sdk().webhooks.constructEvent({
        payload: request.body.replace('Acme', 'Evil'),
        sigHeader,
        secret: endpoint.secret,
      }),
    ).rejects.toThrow();
    await expect(
      sdk().webhooks.constructEvent({ payload: request.body, sigHeader, secret: 'wrong' }),
    ).rejects.toThrow();

    const [delivery] = await deliveriesOf(env);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, nextAttemptAt: null });
    expect(await worker.tick()).toBe(0);
  });

  it('retries a receiver that fails twice, delivering three times in all, then stops', async () => {
    const env = await newEnvironment();
    const r = await receiver((n) => (n < 2 ? 500 : 200));
    await env.caller.webhookEndpoints.create({ endpoint_url: r.url, events: ['organization.created'] });
    await env.caller.organizations.create({ name: 'Acme' });
    let now = new Date();
    const worker = workerFor(env, { now: () => now, retryBaseMs: 1_000, random: () => 0.5 });

    for (let round = 0; round < 6; round++) {
      await worker.tick();
      await worker.drain();
      now = new Date(now.getTime() + 60 * 60 * 1000);
    }

    expect(r.requests).toHaveLength(3);
    const ids = r.requests.map((req) => JSON.parse(req.body).id);
    expect(new Set(ids).size).toBe(1);
    const attempts = await attemptsOf(env);
    expect(attempts.map((a) => a.statusCode)).toEqual([500, 500, 200]);
    const [delivery] = await deliveriesOf(env);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200 });
  });

  it('backs off exponentially with jitter and gives up after three days', async () => {
    const env = await newEnvironment();
    const r = await receiver(() => 503);
    await env.caller.webhookEndpoints.create({ endpoint_url: r.url, events: ['*'] });
    await env.caller.organizations.create({ name: 'Acme' });
    const start = new Date();
    let now = start;
    const worker = workerFor(env, { now: () => now });
    expect([1, 2, 3].map((n) => worker.retryDelayMs(n) >= 15_000 * 2 ** (n - 1))).toEqual([true, true, true]);
    expect(worker.retryDelayMs(1)).toBeLessThanOrEqual(30_000);

    for (let round = 0; round < 40; round++) {
      await worker.tick();
      await worker.drain();
      const [delivery] = await deliveriesOf(env);
      if (delivery?.status !== 'pending') break;
      now = delivery.nextAttemptAt as Date;
    }
    const [delivery] = await deliveriesOf(env);
    expect(delivery?.status).toBe('failed');
    expect(delivery?.lastStatusCode).toBe(503);
    expect(now.getTime() - start.getTime()).toBeLessThanOrEqual(3 * 24 * 60 * 60 * 1000);
    expect(r.requests.length).toBe((await attemptsOf(env)).length);
    const count = r.requests.length;
    now = new Date(now.getTime() + 24 * 60 * 60 * 1000);
    await worker.tick();
    await worker.drain();
    expect(r.requests.length).toBe(count);
  });

  it('a receiver that hangs delays neither a healthy receiver nor the API', async () => {
    const env = await newEnvironment();
    const stuck = await receiver(() => 'hang');
    const healthy = await receiver();
    await env.caller.webhookEndpoints.create({ endpoint_url: stuck.url, events: ['*'] });
    await env.caller.webhookEndpoints.create({ endpoint_url: healthy.url, events: ['*'] });
    const worker = workerFor(env, { intervalMs: 20, timeoutMs: 10_000 });
    worker.start();
    try {
      const started = Date.now();
      const created = await env.http.post('/organizations', { name: 'Acme' });
      expect(created.status).toBe(201);
      await healthy.waitFor(1, 3_000);
      await stuck.waitFor(1, 3_000);
      expect(Date.now() - started).toBeLessThan(3_000);
      // The API answers while the stuck attempt is still open.
      const t = Date.now();
      expect((await env.http.post('/organizations', { name: 'Second' })).status).toBe(201);
      expect(Date.now() - t).toBeLessThan(2_000);
      await healthy.waitFor(2, 3_000);
    } finally {
      await stuck.close();
      await worker.stop();
    }
  });

  it('a fan-out step that queues nothing leaves the claim to the poll interval; one that queues some claims them at once, so an endpoint made later gets the events after it', async () => {
    // `quiet` has no endpoint (a directory syncing into it); `other` has one.
    const quiet = await newEnvironment();
    const other = await newEnvironment();
    const r = await receiver();
    await other.caller.webhookEndpoints.create({ endpoint_url: r.url, events: ['*'] });
    const worker = workerFor(quiet, { environmentId: [quiet.environmentId, other.environmentId], intervalMs: 60_000 });
    // An idle tick claims (nothing is due).
    expect(await worker.tick()).toBe(0);
    // A delivery of `other` is due (queued by another worker's fan-out).
    await other.caller.organizations.create({ name: 'Due' });
    expect(await workerFor(other).fanOut()).toBe(1);
    // The sync's events expand into no delivery: that tick takes nothing, not even `other`'s.
    for (let i = 0; i < 3; i++) await quiet.caller.organizations.create({ name: `Synced ${i}` });
    expect(await worker.tick()).toBe(0);
    expect(await deliveriesOf(other)).toMatchObject([{ status: 'pending', attempts: 0 }]);
    expect(await deliveriesOf(quiet)).toEqual([]);
    // Once the backlog is expanded, the next tick claims again: `other`'s delivery is not lost.
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect(r.requests.map((req) => JSON.parse(req.body).data.name)).toEqual(['Due']);
    expect(await worker.tick()).toBe(0);

    // An endpoint made in `quiet` now gets the events recorded after it (not the sync's before
    // it): the step that queues them claims them at once, though the last claim found nothing.
    const late = await receiver();
    await quiet.caller.webhookEndpoints.create({ endpoint_url: late.url, events: ['*'] });
    await quiet.caller.organizations.create({ name: 'After the endpoint' });
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect(late.requests.map((req) => JSON.parse(req.body).data.name)).toEqual(['After the endpoint']);
    expect(await deliveriesOf(quiet)).toMatchObject([{ status: 'delivered', attempts: 1 }]);
  });

  it('queues nothing for a disabled endpoint, and stops sending once an endpoint is disabled', async () => {
    const env = await newEnvironment();
    const r = await receiver();
    const endpoint = await env.caller.webhookEndpoints.create({ endpoint_url: r.url, events: ['*'] });
    await env.caller.organizations.create({ name: 'Queued' });
    const worker = workerFor(env);
    // Fan-out happens in the worker: the endpoint is enabled then, so the event is queued.
    expect(await worker.fanOut()).toBe(1);
    await env.caller.webhookEndpoints.update({ id: endpoint.id, status: 'disabled' });
    await env.caller.organizations.create({ name: 'Not queued' });
    expect(await worker.tick()).toBe(0);
    expect(await deliveriesOf(env)).toHaveLength(1);
    await worker.drain();
    expect(r.requests).toHaveLength(0);
  });

  it('refuses private addresses at delivery time unless allowed', async () => {
    const env = await newEnvironment();
    const r = await receiver();
    await env.caller.webhookEndpoints.create({ endpoint_url: r.url, events: ['*'] });
    await env.caller.webhookEndpoints.create({ endpoint_url: r.url.replace('127.0.0.1', 'localhost'), events: ['*'] });
    await env.caller.organizations.create({ name: 'Acme' });
    const worker = workerFor(env, { allowPrivate: false });
    expect(await worker.tick()).toBe(2);
    await worker.drain();
    expect(r.requests).toHaveLength(0);
    const attempts = await attemptsOf(env);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(attempt.error).toMatch(/private/);
  });

  it('refuses private, loopback and link-local endpoint URLs when saving them unless allowed', async () => {
    const env = await newEnvironment();
    const strict = createCaller(
      createInnerContext(
        { ...env.deps, config: { ...env.deps.config, webhooksAllowPrivate: false } },
        `Bearer ${env.apiKey}`,
      ),
    );
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://localhost/hooks',
      'http://10.1.2.3/hooks',
      'http://192.168.0.10/hooks',
      'http://169.254.169.254/latest',
      'http://[::1]/hooks',
      'http://[fe80::1]/hooks',
    ]) {
      await expect(strict.webhookEndpoints.create({ endpoint_url: url, events: ['*'] })).rejects.toMatchObject({
        status: 422,
        errors: [expect.objectContaining({ field: 'endpoint_url' })],
      });
    }
    const list = await env.caller.webhookEndpoints.list({ limit: 10, order: 'desc' });
    expect(list.data).toEqual([]);
    const ok = await strict.webhookEndpoints.create({ endpoint_url: 'https://93.184.215.14/hooks', events: ['*'] });
    expect(ok.endpoint_url).toBe('https://93.184.215.14/hooks');
  });
});

describe('webhook secrets at rest', () => {
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const sdk = () =>
    new WorkOS('sk_test_unused', { apiHostname: '127.0.0.1', port: 1, https: false, clientId: 'client_x' });

  async function storedSecret(env: TestEnvironment, id: string): Promise<string> {
    const [row] = await env.deps.db
      .select({ secret: webhookEndpoints.secret })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, id));
    if (!row) throw new Error(`no endpoint ${id}`);
    return row.secret;
  }

  /** Delivers one organization.created to `url`'s receiver and returns what the SDK verified. */
  async function deliverAndVerify(env: TestEnvironment, receiver: Receiver, secret: string) {
    await env.caller.organizations.create({ name: 'Acme' });
    const worker = new WebhookWorker(env.deps, {
      allowPrivate: true,
      environmentId: env.environmentId,
      purgeEveryMs: Number.POSITIVE_INFINITY,
    });
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    const [request] = receiver.requests;
    if (!request) throw new Error('nothing delivered');
    const sigHeader = request.headers['workos-signature'] as string;
    return sdk().webhooks.constructEvent({ payload: request.body, sigHeader, secret });
  }
  it('are stored encrypted under the master key; the API still shows the secret and deliveries verify', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const created = await env.http.post('/webhook_endpoints', {
      endpoint_url: receiver.url,
      events: ['organization.created'],
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^[0-9A-Za-z]{40}$/);

    const stored = await storedSecret(env, created.body.id);
    expect(stored).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(Buffer.from(secret).toString('base64url').slice(0, 20));
    expect(openWebhookSecret(env.deps.tokens.masterKey, created.body.id, stored)).toBe(secret);
    // Bound to the master key and to its row.
    expect(() => openWebhookSecret(randomBytes(32), created.body.id, stored)).toThrow(/cannot be decrypted/);
    expect(() => openWebhookSecret(env.deps.tokens.masterKey, 'we_01HZZZZZZZZZZZZZZZZZZZZZZZ', stored)).toThrow(
      /cannot be decrypted/,
    );

    expect((await env.http.get(`/webhook_endpoints/${created.body.id}`)).body.secret).toBe(secret);
    const event = await deliverAndVerify(env, receiver, secret);
    expect(event).toMatchObject({ event: 'organization.created', data: { name: 'Acme' } });
  });

  it('reads and signs with a legacy plaintext secret, and seals it at start-up', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const created = await env.caller.webhookEndpoints.create({ endpoint_url: receiver.url, events: ['*'] });
    // A row written before secrets were encrypted.
    const legacy = 'LegacyPlaintextSecret0123456789abcdefghi';
    await env.deps.db.update(webhookEndpoints).set({ secret: legacy }).where(eq(webhookEndpoints.id, created.id));

    expect((await env.caller.webhookEndpoints.get({ id: created.id })).secret).toBe(legacy);
    expect(await deliverAndVerify(env, receiver, legacy)).toMatchObject({ event: 'organization.created' });

    expect(await sealLegacyWebhookSecrets(env.deps, 1)).toBeGreaterThanOrEqual(1);
    const sealed = await storedSecret(env, created.id);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(legacy);
    expect((await env.caller.webhookEndpoints.get({ id: created.id })).secret).toBe(legacy);
    // Once sealed, a second pass leaves it alone.
    await sealLegacyWebhookSecrets(env.deps);
    expect(await storedSecret(env, created.id)).toBe(sealed);
  });
});
