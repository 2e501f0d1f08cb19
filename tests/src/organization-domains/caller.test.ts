import { type DbHandle, events, openDb, organizationDomains } from '@atrium/db';
import {
  createCaller,
  createInnerContext,
  DEFAULT_VERIFICATION_PERIOD_SECONDS,
  type Deps,
  newCaches,
} from '@atrium/routers';
import { createDnsResolver, type DevDnsServer, startDevDns, VerificationWorker } from '@atrium/server';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { storedCounts } from '../helpers/store.ts';
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
    const worker = new VerificationWorker({} as never, {
      resolver: { resolveTxt: async () => [], resolveNs: async () => [] },
    });
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
    const inside = new Date(start.getTime() + DEFAULT_VERIFICATION_PERIOD_SECONDS * 1000 - 60_000);
    await workerFor(env, () => inside).tick();
    expect((await row(env, domain.id)).state).toBe('pending');

    // The next check falls after the period: failed, with the reason and one event.
    const late = new Date(start.getTime() + DEFAULT_VERIFICATION_PERIOD_SECONDS * 1000 + 2 * 60 * 60 * 1000);
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
        resolveNs: async () => [],
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

const databaseUrl = inject('databaseUrl');

// PGlite is one in-process connection: two workers on it cannot race. The guarantee under test
// (FOR UPDATE SKIP LOCKED between processes) is PostgreSQL's, so this runs on PostgreSQL only.
describe.skipIf(!databaseUrl)('two verification workers on one PostgreSQL', () => {
  let dns: DevDnsServer;
  let second: DbHandle;
  beforeAll(async () => {
    dns = await startDevDns();
    second = await openDb({ databaseUrl, poolSize: 5 });
  });
  afterAll(async () => {
    await dns.close();
    await second.close();
  });

  it('check each of 200 due domains exactly once and emit no double events', async () => {
    const env = await newEnvironment();
    const names = Array.from({ length: 200 }, () => uniqueDomain('race'));
    for (const chunk of [names.slice(0, 100), names.slice(100)]) {
      await env.caller.organizations.create({
        name: 'Racer',
        domain_data: chunk.map((domain) => ({ domain, state: 'pending' as const })),
      });
    }
    const rows = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(rows).toHaveLength(200);
    // Every other domain publishes its token.
    const matching = new Set<string>();
    rows.forEach((row, i) => {
      const name = `${row.verificationPrefix}.${row.domain}`;
      if (i % 2 === 0) {
        matching.add(row.id);
        dns.set(name, { txt: [row.verificationToken] });
      } else dns.set(name, 'nxdomain');
    });
    const now = new Date();
    await env.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: now })
      .where(eq(organizationDomains.environmentId, env.environmentId));

    const lookups = new Map<string, number>();
    const real = createDnsResolver([dns.address], 2_000);
    const counting = {
      resolveTxt: (name: string) => {
        lookups.set(name, (lookups.get(name) ?? 0) + 1);
        return real.resolveTxt(name);
      },
      resolveNs: (name: string) => real.resolveNs(name),
    };
    const secondDeps: Deps = { ...env.deps, db: second.db, driver: second.driver, caches: newCaches() };
    const options = { resolver: counting, batchSize: 7, concurrency: 4, environmentId: env.environmentId };
    const a = new VerificationWorker(env.deps, options);
    const b = new VerificationWorker(secondDeps, options);

    let taken = 0;
    for (let round = 0; round < 200; round++) {
      const [x, y] = await Promise.all([a.tick(), b.tick()]);
      taken += x + y;
      if (x + y === 0) break;
    }

    expect(taken).toBe(200);
    expect(lookups.size).toBe(200);
    expect([...lookups.values()].every((n) => n === 1)).toBe(true);
    const after = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(after.every((row) => row.checkAttempts === 1)).toBe(true);
    expect(
      after
        .filter((row) => row.state === 'verified')
        .map((row) => row.id)
        .sort(),
    ).toEqual([...matching].sort());
    const verifiedEvents = await env.deps.db
      .select({ domainId: sql<string>`${events.data}->>'id'` })
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization_domain.verified')));
    expect(verifiedEvents).toHaveLength(100);
    expect(new Set(verifiedEvents.map((e) => e.domainId))).toEqual(matching);
  });
});

describe('organization domains (caller)', () => {
  it('creates, reads, verifies and deletes a domain', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const domain = uniqueDomain();
    const created = await env.caller.organizationDomains.create({
      organization_id: org.id,
      domain: ` ${domain.toUpperCase()} `,
    });
    expect(created).toMatchObject({
      object: 'organization_domain',
      organization_id: org.id,
      domain,
      state: 'pending',
      verification_strategy: 'dns',
      verification_failed_reason: null,
    });
    expect(await env.caller.organizationDomains.get({ id: created.id })).toEqual(created);

    const verifying = await env.caller.organizationDomains.verify({ id: created.id });
    expect(verifying.state).toBe('pending');
    const [row] = await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, created.id));
    expect(row?.nextCheckAt).toBeInstanceOf(Date);

    await env.caller.organizationDomains.delete({ id: created.id });
    await expect(env.caller.organizationDomains.get({ id: created.id })).rejects.toMatchObject({ status: 404 });
    expect((await env.caller.organizations.get({ id: org.id })).domains).toEqual([]);
  });

  it('answers 409 for a domain the organization already holds, and 400 when verifying a verified domain', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const org = await env.caller.organizations.create({ name: 'Acme', domain_data: [{ domain, state: 'verified' }] });
    await expect(env.caller.organizationDomains.create({ organization_id: org.id, domain })).rejects.toMatchObject({
      status: 409,
      apiCode: 'domain_already_exists',
    });
    await expect(env.caller.organizationDomains.verify({ id: org.domains[0]!.id })).rejects.toMatchObject({
      status: 400,
      apiCode: 'domain_already_verified',
    });
    const other = await env.caller.organizations.create({ name: 'Other' });
    await expect(env.caller.organizationDomains.create({ organization_id: other.id, domain })).rejects.toMatchObject({
      status: 409,
      apiCode: 'domain_verified_by_other_organization',
    });
  });

  it("answers 404 for a domain on an unknown organization or another environment's, storing nothing", async () => {
    const env = await newEnvironment();
    const elsewhere = await newEnvironment();
    const before = await storedCounts(elsewhere);
    const foreign = await elsewhere.caller.organizations.create({ name: 'Foreign' });
    for (const organization_id of ['org_01HZZZZZZZZZZZZZZZZZZZZZZZ', foreign.id]) {
      await expect(
        env.caller.organizationDomains.create({ organization_id, domain: uniqueDomain() }),
      ).rejects.toMatchObject({ status: 404, apiCode: 'entity_not_found' });
    }
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
    expect(await storedCounts(elsewhere)).toEqual({ ...before, organizations: 1, events: before.events + 1 });
  });

  it('restarts verification of a failed claim', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const loser = await env.caller.organizations.create({ name: 'L', domain_data: [{ domain, state: 'pending' }] });
    const winner = await env.caller.organizations.create({ name: 'W', domain_data: [{ domain, state: 'verified' }] });
    const claim = (await env.caller.organizations.get({ id: loser.id })).domains[0]!;
    expect(claim.state).toBe('failed');
    // While another organization holds it verified, a restart is refused.
    await expect(env.caller.organizationDomains.verify({ id: claim.id })).rejects.toMatchObject({ status: 409 });
    await env.caller.organizationDomains.delete({ id: winner.domains[0]!.id });
    const restarted = await env.caller.organizationDomains.verify({ id: claim.id });
    expect(restarted).toMatchObject({ state: 'pending', verification_failed_reason: null });
  });

  it('refuses a domain for an unknown organization and stores nothing', async () => {
    const env = await newEnvironment();
    await expect(
      env.caller.organizationDomains.create({
        organization_id: 'org_01HXXXXXXXXXXXXXXXXXXXXXXX',
        domain: uniqueDomain(),
      }),
    ).rejects.toMatchObject({ status: 404, apiCode: 'entity_not_found' });
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
  });
});
