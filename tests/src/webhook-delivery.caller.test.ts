import { webhookAttempts, webhookDeliveries } from '@atrium/db';
import { createCaller, createInnerContext } from '@atrium/routers';
import { WebhookWorker, type WebhookWorkerOptions } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { asc, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { Receiver } from './helpers/receiver.ts';
import { newEnvironment, type TestEnvironment } from './helpers/world.ts';

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

describe('webhook delivery', () => {
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
