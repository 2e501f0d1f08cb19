import { organizationDomains } from '@atrium/db';
import { createCaller, createInnerContext, VERIFICATION_PERIOD_MS } from '@atrium/routers';
import { type DevDnsServer, startDevDns, VerificationWorker } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

let dns: DevDnsServer;
beforeAll(async () => {
  dns = await startDevDns();
});
afterAll(async () => {
  await dns.close();
});

/** A worker on the real node:dns resolver code, pointed at the loopback DNS server. */
function workerFor(env: TestEnvironment, now: () => Date = () => new Date()) {
  return new VerificationWorker(env.deps, {
    servers: [dns.address],
    timeoutMs: 250,
    concurrency: 4,
    now,
    environmentId: env.environmentId,
  });
}

async function pendingDomain(env: TestEnvironment, name = uniqueDomain()) {
  const org = await env.caller.organizations.create({ name: 'Acme' });
  const domain = await env.caller.organizationDomains.create({ organization_id: org.id, domain: name });
  return { org, domain, recordName: `${domain.verification_prefix}.${domain.domain}` };
}

async function row(env: TestEnvironment, id: string) {
  const [found] = await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, id));
  if (!found) throw new Error(`no domain ${id}`);
  return found;
}

describe('DNS verification worker', () => {
  it('verifies a domain whose TXT record holds the exact token, with one verified event', async () => {
    const env = await newEnvironment();
    const { domain, recordName } = await pendingDomain(env);
    dns.set(recordName, { txt: ['unrelated', domain.verification_token] });
    const verifying = await env.caller.organizationDomains.verify({ id: domain.id });
    expect(verifying.state).toBe('pending');
    const before = (await storedEvents(env)).length;

    expect(await workerFor(env).tick()).toBe(1);

    const read = await env.caller.organizationDomains.get({ id: domain.id });
    expect(read).toMatchObject({ state: 'verified', verification_strategy: 'dns' });
    const stored = await row(env, domain.id);
    expect(stored).toMatchObject({ checkAttempts: 1, verificationError: null, nextCheckAt: null });
    expect(stored.lastCheckedAt).toBeInstanceOf(Date);
    expect(await eventNamesSince(env, before)).toEqual(['organization_domain.verified']);
    const [event] = (await storedEvents(env)).slice(before);
    expect(event?.data).toMatchObject({ id: domain.id, state: 'verified', object: 'organization_domain' });
  });

  it('accepts the verification_token=<token> form', async () => {
    const env = await newEnvironment();
    const { domain, recordName } = await pendingDomain(env);
    dns.set(recordName, { txt: [`verification_token=${domain.verification_token}`] });
    await env.caller.organizationDomains.verify({ id: domain.id });
    await workerFor(env).tick();
    expect((await env.caller.organizationDomains.get({ id: domain.id })).state).toBe('verified');
  });

  describe.each([
    ['a wrong token', { txt: ['verification_token=not-the-token'] }, /does not hold the verification token/],
    ['no TXT record (NOERROR, no data)', { txt: [] }, /no TXT record/],
    ['NXDOMAIN', 'nxdomain', /NXDOMAIN/],
    ['a server that never answers (timeout)', 'no-answer', /timeout/i],
  ] as const)('with %s', (_label, answer, error) => {
    it('stays pending, records the attempt and the error (never the token), and backs off', async () => {
      const env = await newEnvironment();
      const { domain, recordName } = await pendingDomain(env);
      dns.set(recordName, answer);
      await env.caller.organizationDomains.verify({ id: domain.id });
      const before = (await storedEvents(env)).length;
      const now = new Date();
      const worker = workerFor(env, () => now);

      expect(await worker.tick()).toBe(1);

      const stored = await row(env, domain.id);
      expect(stored.state).toBe('pending');
      expect(stored.checkAttempts).toBe(1);
      expect(stored.verificationError).toMatch(error);
      expect(stored.verificationError).not.toContain(domain.verification_token);
      expect(stored.nextCheckAt?.getTime()).toBe(now.getTime() + worker.retryDelayMs(0));
      expect(await eventNamesSince(env, before)).toEqual([]);
      // Not due again yet: a second tick takes nothing.
      expect(await worker.tick()).toBe(0);
    });
  });

  it('backs off by doubling up to hourly', () => {
    const worker = new VerificationWorker({} as never, { resolver: { resolveTxt: async () => [] } });
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => worker.retryDelayMs(n));
    expect(delays.slice(0, 4)).toEqual([15_000, 30_000, 60_000, 120_000]);
    expect(delays.at(-1)).toBe(60 * 60 * 1000);
    expect([...delays].sort((a, b) => a - b)).toEqual(delays);
  });

  it('verifies one of two organizations claiming a domain and fails the other claim', async () => {
    const env = await newEnvironment();
    const name = uniqueDomain();
    const owner = await pendingDomain(env, name);
    const squatter = await pendingDomain(env, name);
    dns.set(owner.recordName, { txt: [owner.domain.verification_token] });
    if (squatter.recordName !== owner.recordName) dns.set(squatter.recordName, 'nxdomain');
    await env.caller.organizationDomains.verify({ id: owner.domain.id });
    const before = (await storedEvents(env)).length;

    await workerFor(env).tick();

    expect((await env.caller.organizationDomains.get({ id: owner.domain.id })).state).toBe('verified');
    const lost = await env.caller.organizationDomains.get({ id: squatter.domain.id });
    expect(lost).toMatchObject({
      state: 'failed',
      verification_failed_reason: 'domain_verified_by_other_organization',
    });
    const after = (await storedEvents(env)).slice(before);
    expect(after.map((e) => e.event)).toEqual([
      'organization_domain.verified',
      'organization_domain.verification_failed',
    ]);
    expect(after[1]?.data).toMatchObject({
      reason: 'domain_verified_by_other_organization',
      organization_domain: { id: squatter.domain.id, state: 'failed' },
    });
    // Verifying the lost claim again is refused while the other organization holds the domain.
    await expect(env.caller.organizationDomains.verify({ id: squatter.domain.id })).rejects.toMatchObject({
      status: 409,
    });
  });

  it('fails a claim after 30 days without success, and a later verify restarts it', async () => {
    const env = await newEnvironment();
    const { domain, recordName } = await pendingDomain(env);
    dns.set(recordName, 'nxdomain');
    await env.caller.organizationDomains.verify({ id: domain.id });
    const before = (await storedEvents(env)).length;

    // Just inside the period: still pending.
    const start = (await row(env, domain.id)).verificationStartedAt as Date;
    const inside = new Date(start.getTime() + VERIFICATION_PERIOD_MS - 60_000);
    await workerFor(env, () => inside).tick();
    expect((await row(env, domain.id)).state).toBe('pending');

    // The next check falls after the period: failed, with the reason and one event.
    const late = new Date(start.getTime() + VERIFICATION_PERIOD_MS + 2 * 60 * 60 * 1000);
    expect(await workerFor(env, () => late).tick()).toBe(1);
    const expired = await env.caller.organizationDomains.get({ id: domain.id });
    expect(expired).toMatchObject({
      state: 'failed',
      verification_failed_reason: 'domain_verification_period_expired',
    });
    expect(await eventNamesSince(env, before)).toEqual(['organization_domain.verification_failed']);
    expect(await workerFor(env, () => late).tick()).toBe(0);

    // Restart: verify answers pending, a fresh period begins, and the record now verifies it.
    const restarted = await env.caller.organizationDomains.verify({ id: domain.id });
    expect(restarted).toMatchObject({ state: 'pending', verification_failed_reason: null });
    const fresh = await row(env, domain.id);
    expect(fresh.checkAttempts).toBe(0);
    expect(fresh.verificationStartedAt?.getTime()).toBeGreaterThan(start.getTime());
    dns.set(recordName, { txt: [domain.verification_token] });
    await workerFor(env).tick();
    expect((await env.caller.organizationDomains.get({ id: domain.id })).state).toBe('verified');
  });

  it('records a lost race (the domain got verified elsewhere mid-check) as verification_failed', async () => {
    const env = await newEnvironment();
    const name = uniqueDomain();
    const mine = await pendingDomain(env, name);
    await env.caller.organizationDomains.verify({ id: mine.domain.id });
    const { takeDueDomains, applyDnsResult, scopeOf } = await import('@atrium/routers');
    const {
      domains: [leased],
    } = await takeDueDomains(env.deps.db, new Date(), 10, 60_000, {
      perEnvironment: 10,
      environments: [env.environmentId],
    });
    if (!leased) throw new Error('nothing leased');
    await env.caller.organizations.create({ name: 'Winner', domain_data: [{ domain: name, state: 'verified' }] });
    // Simulate the race: our claim is still pending under our lease when the result arrives.
    await env.deps.db
      .update(organizationDomains)
      .set({ state: 'pending', verificationFailedReason: null, nextCheckAt: leased.leaseUntil })
      .where(eq(organizationDomains.id, mine.domain.id));
    const before = (await storedEvents(env)).length;
    const scope = await scopeOf(env.deps, env.environmentId);
    expect(await applyDnsResult(scope, leased, { matched: true }, new Date())).toBe('failed');
    const lost = await env.caller.organizationDomains.get({ id: mine.domain.id });
    expect(lost).toMatchObject({
      state: 'failed',
      verification_failed_reason: 'domain_verified_by_other_organization',
    });
    expect(await eventNamesSince(env, before)).toEqual(['organization_domain.verification_failed']);
  });

  it('drops a result whose lease was superseded (the domain was deleted meanwhile)', async () => {
    const env = await newEnvironment();
    const { domain, recordName } = await pendingDomain(env);
    await env.caller.organizationDomains.verify({ id: domain.id });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const lookingUp = new Promise<void>((resolve) => {
      entered = resolve;
    });
    dns.set(recordName, { txt: [domain.verification_token] });
    const worker = new VerificationWorker(env.deps, {
      environmentId: env.environmentId,
      resolver: {
        resolveTxt: async (name) => {
          entered();
          await gate;
          return [[name === recordName ? domain.verification_token : 'x']];
        },
      },
    });
    const ticking = worker.tick();
    await lookingUp;
    await env.caller.organizationDomains.delete({ id: domain.id });
    const before = (await storedEvents(env)).length;
    release();
    expect(await ticking).toBe(1);
    expect(await eventNamesSince(env, before)).toEqual([]);
  });

  it('runs on its timer: verify with the record in place reads verified within 5 seconds', async () => {
    const env = await newEnvironment();
    const { domain, recordName } = await pendingDomain(env);
    dns.set(recordName, { txt: [domain.verification_token] });
    const worker = new VerificationWorker(env.deps, {
      servers: [dns.address],
      intervalMs: 200,
      environmentId: env.environmentId,
    });
    worker.start();
    try {
      const started = Date.now();
      await env.http.post(`/organization_domains/${domain.id}/verify`, {});
      let state = 'pending';
      while (state !== 'verified' && Date.now() - started < 5_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        state = (await env.http.get(`/organization_domains/${domain.id}`)).body.state;
      }
      expect(state).toBe('verified');
    } finally {
      await worker.stop();
    }
  });
});

describe('manual verification', () => {
  it('marks a pending domain verified with strategy manual, failing competing claims, with events', async () => {
    const env = await newEnvironment();
    const name = uniqueDomain();
    const a = await pendingDomain(env, name);
    const b = await pendingDomain(env, name);
    const before = (await storedEvents(env)).length;
    const { verifyOrganizationDomainManually, scopeOf } = await import('@atrium/routers');
    const scope = await scopeOf(env.deps, env.environmentId);
    const verified = await verifyOrganizationDomainManually(scope, a.domain.id);
    expect(verified).toMatchObject({ state: 'verified', verification_strategy: 'manual' });
    expect((await env.caller.organizationDomains.get({ id: b.domain.id })).state).toBe('failed');
    expect(await eventNamesSince(env, before)).toEqual([
      'organization_domain.verified',
      'organization_domain.verification_failed',
    ]);
    await expect(verifyOrganizationDomainManually(scope, a.domain.id)).rejects.toMatchObject({
      status: 400,
      apiCode: 'domain_already_verified',
    });
    // Another environment's caller cannot see it.
    const other = await newEnvironment();
    await expect(
      createCaller(createInnerContext(other.deps, `Bearer ${other.apiKey}`)).organizationDomains.get({
        id: a.domain.id,
      }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
