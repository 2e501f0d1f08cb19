import { organizationDomains } from '@atrium/db';
import { DEFAULT_VERIFICATION_PERIOD_SECONDS, type Deps } from '@atrium/routers';
import { type DevDnsServer, loadConfig, startDevDns, VerificationWorker } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

let dns: DevDnsServer;
beforeAll(async () => {
  dns = await startDevDns();
});
afterAll(async () => {
  await dns.close();
});

/** The deps of the environment with a verification window of `seconds` (DNS_VERIFICATION_PERIOD_SECONDS). */
const withPeriod = (env: TestEnvironment, seconds: number): Deps => ({
  ...env.deps,
  config: { ...env.deps.config, dnsVerificationPeriodSeconds: seconds },
});

/** A worker on the loopback DNS server whose clock is `now` (no sleeps: the test moves it). */
const workerAt = (deps: Deps, env: TestEnvironment, now: () => Date) =>
  new VerificationWorker(deps, {
    servers: [dns.address],
    timeoutMs: 250,
    concurrency: 2,
    now,
    environmentId: env.environmentId,
  });

async function stored(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, id));
  if (!row) throw new Error(`no domain ${id}`);
  return row;
}

describe('DNS_VERIFICATION_PERIOD_SECONDS', () => {
  it('is read with the other DNS_* settings: 30 days by default, at least one second', () => {
    expect(loadConfig({}).dnsVerificationPeriodSeconds).toBe(30 * 24 * 60 * 60);
    expect(DEFAULT_VERIFICATION_PERIOD_SECONDS).toBe(30 * 24 * 60 * 60);
    expect(loadConfig({ DNS_VERIFICATION_PERIOD_SECONDS: '5' }).dnsVerificationPeriodSeconds).toBe(5);
    expect(loadConfig({ DNS_VERIFICATION_PERIOD_SECONDS: '0' }).dnsVerificationPeriodSeconds).toBe(1);
    expect(() => loadConfig({ DNS_VERIFICATION_PERIOD_SECONDS: 'soon' })).toThrow(/DNS_VERIFICATION_PERIOD_SECONDS/);
  });

  it('fails a domain whose record never appears within a window of seconds; reverify restarts it, the record verifies it', async () => {
    const env = await newEnvironment();
    const deps = withPeriod(env, 5);
    const a = await clientSetup(env, { scopes: ['widgets:domain-verification:manage'] });
    const domain = uniqueDomain();
    const created = await env.http.post('/organization_domains', { organization_id: a.organizationId, domain });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const recordName = `${created.body.verification_prefix}.${domain}`;
    dns.set(recordName, 'nxdomain');
    expect((await env.http.post(`/organization_domains/${id}/verify`)).status).toBe(201);
    const start = (await stored(env, id)).verificationStartedAt as Date;

    // Inside the window a miss leaves it pending; past it the next miss fails it.
    expect(await workerAt(deps, env, () => new Date(start.getTime() + 2_000)).tick()).toBe(1);
    expect((await stored(env, id)).state).toBe('pending');
    const before = (await storedEvents(env)).length;
    const late = new Date(start.getTime() + 60 * 60 * 1000);
    expect(await workerAt(deps, env, () => late).tick()).toBe(1);
    expect(await stored(env, id)).toMatchObject({
      state: 'failed',
      verificationFailedReason: 'domain_verification_period_expired',
    });
    expect(await eventNamesSince(env, before)).toEqual(['organization_domain.verification_failed']);
    const listed = await a.http.get('/_widgets/admin-portal/organization-domains');
    expect(listed.body.data).toEqual([expect.objectContaining({ id, state: 'Failed' })]);

    // The widget's "Restart verification": back to pending, checked again, a fresh window.
    const restarted = await a.http.post(`/_widgets/admin-portal/organization-domains/${id}/reverify`);
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ id, state: 'Pending' });
    const fresh = await stored(env, id);
    expect(fresh).toMatchObject({ state: 'pending', checkAttempts: 0, verificationFailedReason: null });
    expect(fresh.verificationStartedAt?.getTime()).toBeGreaterThan(start.getTime());

    // Once the record is published (as the widget's DNS dialog shows it), the next check verifies it.
    dns.set(recordName, { txt: [`verification_token=${created.body.verification_token}`] });
    expect(await workerAt(deps, env, () => new Date()).tick()).toBe(1);
    expect((await stored(env, id)).state).toBe('verified');
    const after = await a.http.get('/_widgets/admin-portal/organization-domains');
    expect(after.body.data).toEqual([expect.objectContaining({ id, state: 'Verified' })]);
  });
});
