import { organizationDomains, webhookDeliveries } from '@atrium/db';
import { loadConfig, VerificationWorker, WebhookWorker } from '@atrium/server';
import { and, eq, inArray } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * One tenant cannot starve the others: the DNS worker and the webhook worker take their work
 * round-robin by environment and cap the slots one environment holds, so a tenant with a
 * backlog against a DNS server or receiver that never answers delays nobody else.
 */

/** Waits (bounded polling) until `done()` holds. */
async function until(done: () => Promise<boolean> | boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function domainsOf(env: TestEnvironment, count: number) {
  const org = await env.caller.organizations.create({ name: 'Tenant' });
  const rows = [];
  for (let i = 0; i < count; i++) {
    rows.push(await env.caller.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain('fair') }));
  }
  return rows;
}

async function stateOf(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db
    .select({ state: organizationDomains.state })
    .from(organizationDomains)
    .where(eq(organizationDomains.id, id));
  return row?.state;
}

describe('DNS verification worker, several environments', () => {
  it("checks a quiet environment's domain in the first round while another's 40 lookups never answer", async () => {
    const noisy = await newEnvironment();
    const quiet = await newEnvironment();
    const stuck = await domainsOf(noisy, 40);
    const [mine] = await domainsOf(quiet, 1);
    if (!mine) throw new Error('no domain');
    // The noisy environment's checks are due first (a minute ago), the quiet one's now.
    const now = new Date();
    await noisy.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: new Date(now.getTime() - 60_000) })
      .where(eq(organizationDomains.environmentId, noisy.environmentId));
    await quiet.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: now })
      .where(eq(organizationDomains.environmentId, quiet.environmentId));

    // A resolver that never answers the noisy environment (until released) and answers ours.
    const noisyNames = new Set(stuck.map((d) => `${d.verification_prefix}.${d.domain}`));
    const hanging: (() => void)[] = [];
    let noisyInFlight = 0;
    let noisyMax = 0;
    const lookups: string[] = [];
    const worker = new VerificationWorker(noisy.deps, {
      concurrency: 8,
      environmentId: [noisy.environmentId, quiet.environmentId],
      resolver: {
        resolveTxt: async (name) => {
          lookups.push(name);
          if (!noisyNames.has(name)) return [[mine.verification_token]];
          noisyInFlight += 1;
          noisyMax = Math.max(noisyMax, noisyInFlight);
          await new Promise<void>((resolve) => hanging.push(resolve));
          noisyInFlight -= 1;
          return [];
        },
        resolveNs: async () => [],
      },
    });

    const round = worker.tick();
    // Our domain is verified while every noisy lookup of the round still hangs.
    await until(async () => (await stateOf(quiet, mine.id)) === 'verified', 'the quiet domain to be verified');
    expect(noisyInFlight).toBeGreaterThan(0);
    // The noisy environment holds at most its share (half of the 8 slots) and no more of its
    // domains were taken in this round.
    expect(noisyMax).toBeLessThanOrEqual(4);
    expect(lookups.filter((name) => noisyNames.has(name))).toHaveLength(4);
    for (const release of hanging.splice(0)) release();
    expect(await round).toBe(5);

    // The rest of the noisy environment's checks follow, at most 4 per round.
    const released = setInterval(() => {
      for (const release of hanging.splice(0)) release();
    }, 5);
    try {
      let rounds = 1;
      while ((await worker.tick()) > 0) rounds += 1;
      expect(rounds).toBe(10);
    } finally {
      clearInterval(released);
    }
    expect(noisyMax).toBeLessThanOrEqual(4);
    const pending = await noisy.deps.db
      .select({ attempts: organizationDomains.checkAttempts })
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, noisy.environmentId));
    expect(pending.map((r) => r.attempts)).toEqual(Array(40).fill(1));
  });
});

describe('webhook worker, several environments', () => {
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it("claims deliveries round-robin: one environment's 40 deliveries to a hanging receiver hold at most half the slots", async () => {
    const slow = await new Receiver(() => 'hang').start();
    const fast = await new Receiver(() => 200).start();
    receivers.push(slow, fast);
    const noisy = await newEnvironment();
    const quiet = await newEnvironment();
    for (let i = 0; i < 20; i++) {
      await noisy.caller.webhookEndpoints.create({ endpoint_url: `${slow.url}?n=${i}`, events: ['*'] });
    }
    await quiet.caller.webhookEndpoints.create({ endpoint_url: fast.url, events: ['*'] });
    await noisy.caller.organizations.create({ name: 'Noisy 1' });
    await noisy.caller.organizations.create({ name: 'Noisy 2' });
    await quiet.caller.organizations.create({ name: 'Quiet' });

    const worker = new WebhookWorker(noisy.deps, {
      allowPrivate: true,
      concurrency: 16,
      timeoutMs: 5_000,
      environmentId: [noisy.environmentId, quiet.environmentId],
      purgeEveryMs: Number.POSITIVE_INFINITY,
    });
    try {
      // One tick (fan-out, then one claim): the noisy environment's 40 deliveries are due
      // first (its events came first), yet it gets 8 (its cap, half of 16) and the quiet one its own.
      expect(await worker.tick()).toBe(9);
      await fast.waitFor(1);
      await slow.waitFor(8);
      // The noisy environment is at its cap: the next claim takes none of its deliveries.
      expect(await worker.tick()).toBe(0);
      expect(slow.requests).toHaveLength(8);
      const unattempted = await noisy.deps.db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(
          and(
            inArray(webhookDeliveries.environmentId, [noisy.environmentId]),
            eq(webhookDeliveries.attempts, 0),
            eq(webhookDeliveries.status, 'pending'),
          ),
        );
      expect(unattempted).toHaveLength(40);
    } finally {
      await slow.close();
      await worker.drain();
    }
    const [delivered] = await quiet.deps.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.environmentId, quiet.environmentId));
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
  });
});

describe('per-environment shares in the configuration', () => {
  it('are half of each worker by default, and set by DNS_PER_ENVIRONMENT and WEBHOOK_PER_ENVIRONMENT', () => {
    expect(loadConfig({})).toMatchObject({ dnsPerEnvironment: 4, webhookPerEnvironment: 8 });
    expect(loadConfig({ DNS_CONCURRENCY: '20', WEBHOOK_CONCURRENCY: '6' })).toMatchObject({
      dnsPerEnvironment: 10,
      webhookPerEnvironment: 3,
    });
    expect(loadConfig({ DNS_PER_ENVIRONMENT: '8', WEBHOOK_PER_ENVIRONMENT: '16' })).toMatchObject({
      dnsPerEnvironment: 8,
      webhookPerEnvironment: 16,
    });
  });
});
