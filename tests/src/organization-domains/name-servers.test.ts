import { organizationDomains } from '@atrium/db';
import { nameServerProvider } from '@atrium/routers';
import { type DevDnsServer, startDevDns, VerificationWorker } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { surfaces } from '../helpers/client-surfaces.ts';
import { storedEvents } from '../helpers/events.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * The DNS worker also looks up the name servers of a domain's zone, so the domain-verification
 * widget can show the provider's icon (`nameServer`); the API-key surface and the events keep
 * the specification's shape.
 */
const DOMAINS = '/_widgets/admin-portal/organization-domains';

let dns: DevDnsServer;
beforeAll(async () => {
  dns = await startDevDns();
});
afterAll(async () => {
  await dns.close();
});

const workerFor = (env: TestEnvironment) =>
  new VerificationWorker(env.deps, {
    servers: [dns.address],
    timeoutMs: 250,
    concurrency: 4,
    environmentId: env.environmentId,
  });

/** A domain added on a client surface (pending, due for a check at once). */
async function added(env: TestEnvironment, name = uniqueDomain()) {
  const a = await clientSetup(env);
  const domain = await surfaces(env, a).trpc.client.domains.create.mutate({ domain: name });
  return {
    a,
    domain: { ...domain, subdomain: domain.subdomain ?? '', verificationToken: domain.verificationToken ?? '' },
  };
}

const storedNameServers = async (env: TestEnvironment, id: string) =>
  (await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, id)))[0]?.nameServers;

describe('the provider a domain widget shows, from its name servers', () => {
  it.each([
    [['ns-1201.awsdns-22.org', 'ns-46.awsdns-05.com', 'ns-744.awsdns-29.net', 'ns-1821.awsdns-35.co.uk'], 'AwsRoute53'],
    [['ada.ns.cloudflare.com', 'bob.ns.cloudflare.com'], 'CloudFlare'],
    [['ns07.domaincontrol.com', 'ns08.domaincontrol.com'], 'GoDaddy'],
    [['ns-cloud-a1.googledomains.com', 'ns-cloud-a2.googledomains.com'], 'GoogleDomains'],
    [['ns1.example-dns.net', 'ns2.example-dns.net'], 'Other'],
    // Two providers at once, or a look-alike that is not the provider's own zone: not claimed.
    [['ada.ns.cloudflare.com', 'ns07.domaincontrol.com'], 'Other'],
    [['ns.cloudflare.com.evil.test', 'domaincontrol.com'], 'Other'],
    [[], 'Other'],
    [null, 'Other'],
  ] as const)('%j is %s', (hosts, provider) => {
    expect(nameServerProvider(hosts)).toBe(provider);
  });

  it('the worker stores the zone’s name servers at a check, and the widget, GraphQL and tRPC show the provider', async () => {
    const env = await newEnvironment();
    const { a, domain } = await added(env);
    expect(domain).toMatchObject({ state: 'Pending', nameServer: 'Other' });
    expect(await storedNameServers(env, domain.id)).toBeNull();
    dns.set(domain.domain, { ns: ['Bob.NS.Cloudflare.com.', 'ada.ns.cloudflare.com'] });
    dns.set(`${domain.subdomain}.${domain.domain}`, { txt: [`verification_token=${domain.verificationToken}`] });

    expect(await workerFor(env).tick()).toBe(1);

    // Lower case, without the root dot, sorted.
    expect(await storedNameServers(env, domain.id)).toEqual(['ada.ns.cloudflare.com', 'bob.ns.cloudflare.com']);
    const listed = await a.http.get(DOMAINS);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: domain.id, state: 'Verified', nameServer: 'CloudFlare' }),
    ]);
    const { gql, trpc } = surfaces(env, a);
    const viaGql = await gql.request<any>(`query($id: ID!) { organizationDomain(id: $id) { nameServer } }`, {
      id: domain.id,
    });
    expect(viaGql.organizationDomain).toEqual({ nameServer: 'CloudFlare' });
    expect(await trpc.client.domains.get.query({ id: domain.id })).toMatchObject({ nameServer: 'CloudFlare' });

    // The API-key surface and the events keep the specification's object: no name servers.
    const rest = await env.http.get(`/organization_domains/${domain.id}`);
    expect(Object.keys(rest.body).sort()).toEqual([
      'created_at',
      'domain',
      'id',
      'object',
      'organization_id',
      'state',
      'updated_at',
      'verification_failed_reason',
      'verification_prefix',
      'verification_strategy',
      'verification_token',
    ]);
    for (const event of await storedEvents(env)) expect(JSON.stringify(event.data)).not.toMatch(/cloudflare/i);
  });

  it('a subdomain takes the name servers of the zone above it; a pending domain keeps them while its record is missing', async () => {
    const env = await newEnvironment();
    const zone = uniqueDomain();
    const { a, domain } = await added(env, `eu.app.${zone}`);
    // eu.app.<zone> and app.<zone> exist without NS records (NOERROR, no data); <zone> is the apex.
    dns.set(domain.domain, { txt: [] });
    dns.set(`app.${zone}`, { txt: [] });
    dns.set(zone, { ns: ['ns-46.awsdns-05.com', 'ns-1201.awsdns-22.org'] });

    expect(await workerFor(env).tick()).toBe(1);

    expect(await storedNameServers(env, domain.id)).toEqual(['ns-1201.awsdns-22.org', 'ns-46.awsdns-05.com']);
    const [shown] = (await a.http.get(DOMAINS)).body.data;
    expect(shown).toMatchObject({ id: domain.id, state: 'Pending', nameServer: 'AwsRoute53' });
    expect(dns.queries.get(domain.domain)).toBeGreaterThan(0);
    expect(dns.queries.get(`app.${zone}`)).toBeGreaterThan(0);

    // No level has NS records: the walk ends at a name of two labels, never asking the TLD.
    const bare = uniqueDomain();
    const other = await surfaces(env, a).trpc.client.domains.create.mutate({ domain: `www.${bare}` });
    dns.set(`www.${bare}`, { txt: [] });
    dns.set(bare, { txt: [] });
    expect(await workerFor(env).tick()).toBe(1);
    expect(await storedNameServers(env, other.id)).toBeNull();
    expect(dns.queries.get(bare)).toBeGreaterThan(0);
    expect(dns.queries.get('com')).toBeUndefined();

    // However deep the name, at most four names are asked (each answering NOERROR without NS).
    const deep = uniqueDomain();
    const names = ['a', 'b', 'c', 'd', 'e'].map((_, i, all) => `${all.slice(i).join('.')}.${deep}`);
    const walked = await surfaces(env, a).trpc.client.domains.create.mutate({ domain: names[0] as string });
    for (const name of [...names, deep]) dns.set(name, { txt: [] });
    expect(await workerFor(env).tick()).toBe(1);
    expect(await storedNameServers(env, walked.id)).toBeNull();
    expect([...names, deep].map((name) => dns.queries.get(name) ?? 0)).toEqual([1, 1, 1, 1, 0, 0]);
  });

  it('the operator console shows what the DNS worker last saw: attempts, times, the error and the name servers', async () => {
    const env = await newEnvironment();
    const { domain } = await added(env);
    const admin = await adminCaller();
    expect((await admin.domains.get({ domain_id: domain.id })).domain.dns_check).toEqual({
      attempts: 0,
      last_checked_at: null,
      next_check_at: expect.any(String),
      error: null,
      name_servers: [],
    });
    dns.set(domain.domain, { ns: ['ns-cloud-a2.googledomains.com', 'ns-cloud-a1.googledomains.com'] });
    const now = new Date();
    const worker = new VerificationWorker(env.deps, {
      servers: [dns.address],
      timeoutMs: 250,
      now: () => now,
      environmentId: env.environmentId,
    });
    expect(await worker.tick()).toBe(1);

    const { domain: seen } = await admin.domains.get({ domain_id: domain.id });
    expect(seen).toMatchObject({ id: domain.id, state: 'pending', object: 'organization_domain' });
    expect(seen.dns_check).toEqual({
      attempts: 1,
      last_checked_at: now.toISOString(),
      next_check_at: new Date(now.getTime() + worker.retryDelayMs(0)).toISOString(),
      error: `NXDOMAIN at ${domain.subdomain}.${domain.domain}`,
      name_servers: ['ns-cloud-a1.googledomains.com', 'ns-cloud-a2.googledomains.com'],
    });
  });

  it('no name servers found (NXDOMAIN, a silent server) stores nothing and never fails a check; earlier ones are kept', async () => {
    const env = await newEnvironment();
    const { a, domain } = await added(env);
    dns.set(`${domain.subdomain}.${domain.domain}`, { txt: ['not the token'] });
    // <domain> and its parent answer NXDOMAIN (unknown names).
    expect(await workerFor(env).tick()).toBe(1);
    expect(await storedNameServers(env, domain.id)).toBeNull();
    expect((await a.http.get(DOMAINS)).body.data[0]).toMatchObject({ state: 'Pending', nameServer: 'Other' });

    // Found once, then the server stops answering for the zone: the last answer stands.
    dns.set(domain.domain, { ns: ['ns07.domaincontrol.com'] });
    await env.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: new Date() })
      .where(eq(organizationDomains.id, domain.id));
    expect(await workerFor(env).tick()).toBe(1);
    expect(await storedNameServers(env, domain.id)).toEqual(['ns07.domaincontrol.com']);

    dns.set(domain.domain, 'no-answer');
    dns.set(`${domain.subdomain}.${domain.domain}`, { txt: [`verification_token=${domain.verificationToken}`] });
    await env.deps.db
      .update(organizationDomains)
      .set({ nextCheckAt: new Date() })
      .where(eq(organizationDomains.id, domain.id));
    expect(await workerFor(env).tick()).toBe(1);
    expect((await a.http.get(DOMAINS)).body.data[0]).toMatchObject({ state: 'Verified', nameServer: 'GoDaddy' });
    expect(await storedNameServers(env, domain.id)).toEqual(['ns07.domaincontrol.com']);
  });
});
