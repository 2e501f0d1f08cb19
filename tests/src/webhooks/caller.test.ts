import {
  type DbHandle,
  events,
  newId,
  openDb,
  organizationDomains,
  organizations,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import { type Deps, newCaches } from '@atrium/routers';
import { WebhookWorker } from '@atrium/server';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

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
