import { organizationDomains, organizations } from '@atrium/db';
import { isoOfJson, toOrganization } from '@atrium/routers';
import { asc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedCounts } from '../helpers/store.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('organizations (caller)', () => {
  it('creates an organization with domains, external id and metadata', async () => {
    const env = await newEnvironment();
    const pending = uniqueDomain();
    const verified = uniqueDomain();
    const org = await env.caller.organizations.create({
      name: 'Acme',
      external_id: 'acme-1',
      metadata: { tier: 'gold' },
      domain_data: [
        { domain: pending.toUpperCase(), state: 'pending' },
        { domain: verified, state: 'verified' },
      ],
    });
    expect(org).toMatchObject({
      object: 'organization',
      name: 'Acme',
      external_id: 'acme-1',
      metadata: { tier: 'gold' },
      billing_customer_id: null,
      allow_profiles_outside_organization: false,
    });
    expect(org.id).toMatch(/^org_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(org.created_at).toMatch(ISO_MS);
    expect(org.domains.map((d) => [d.domain, d.state, d.verification_strategy])).toEqual([
      [pending, 'pending', 'dns'],
      [verified, 'verified', 'manual'],
    ]);
    for (const domain of org.domains) {
      expect(domain.id).toMatch(/^org_domain_/);
      expect(domain.organization_id).toBe(org.id);
      expect(domain.verification_token.length).toBeGreaterThanOrEqual(24);
      expect(domain.verification_prefix).toMatch(/^atrium-domain-verification-/);
    }
    expect(await env.caller.organizations.get({ id: org.id })).toEqual(org);
    expect(await env.caller.organizations.getByExternalId({ external_id: 'acme-1' })).toEqual(org);
  });

  it('updates only the supplied fields, and domain_data adds domains', async () => {
    const env = await newEnvironment();
    const first = uniqueDomain();
    const org = await env.caller.organizations.create({
      name: 'Acme',
      external_id: 'x-1',
      metadata: { a: '1' },
      domain_data: [{ domain: first, state: 'pending' }],
    });
    const renamed = await env.caller.organizations.update({ id: org.id, name: 'Acme Inc' });
    expect(renamed).toMatchObject({ name: 'Acme Inc', external_id: 'x-1', metadata: { a: '1' } });
    expect(renamed.domains).toHaveLength(1);
    expect(Date.parse(renamed.updated_at)).toBeGreaterThanOrEqual(Date.parse(org.updated_at));

    const second = uniqueDomain();
    const updated = await env.caller.organizations.update({
      id: org.id,
      allow_profiles_outside_organization: true,
      billing_customer_id: 'cus_123',
      metadata: { a: null, b: '2' },
      domain_data: [
        { domain: first, state: 'verified' },
        { domain: second, state: 'pending' },
      ],
    });
    expect(updated).toMatchObject({
      name: 'Acme Inc',
      allow_profiles_outside_organization: true,
      billing_customer_id: 'cus_123',
      metadata: { b: '2' },
      external_id: 'x-1',
    });
    expect(updated.domains.map((d) => [d.domain, d.state])).toEqual([
      [first, 'verified'],
      [second, 'pending'],
    ]);
    const cleared = await env.caller.organizations.update({ id: org.id, external_id: null });
    expect(cleared.external_id).toBeNull();
  });

  it('deletes an organization with its domains in one go', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({
      name: 'Gone',
      domain_data: [{ domain: uniqueDomain(), state: 'pending' }],
    });
    await env.caller.organizations.delete({ id: org.id });
    await expect(env.caller.organizations.get({ id: org.id })).rejects.toMatchObject({ status: 404 });
    const left = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.organizationId, org.id));
    expect(left).toEqual([]);
    await expect(env.caller.organizations.delete({ id: org.id })).rejects.toMatchObject({
      status: 404,
      apiCode: 'entity_not_found',
    });
  });

  it('refuses a taken external id with 409 and stores nothing', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'One', external_id: 'dup' });
    const before = await storedCounts(env);
    await expect(env.caller.organizations.create({ name: 'Two', external_id: 'dup' })).rejects.toMatchObject({
      status: 409,
      apiCode: 'external_id_already_used',
    });
    expect(await storedCounts(env)).toEqual(before);
  });

  it('lets several organizations claim a pending domain, and one verified claim fails the others', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const a = await env.caller.organizations.create({ name: 'A', domain_data: [{ domain, state: 'pending' }] });
    const b = await env.caller.organizations.create({ name: 'B', domain_data: [{ domain, state: 'pending' }] });
    const c = await env.caller.organizations.create({ name: 'C', domain_data: [{ domain, state: 'verified' }] });
    expect(c.domains[0]?.state).toBe('verified');
    for (const org of [a, b]) {
      const [claim] = (await env.caller.organizations.get({ id: org.id })).domains;
      expect(claim).toMatchObject({
        state: 'failed',
        verification_failed_reason: 'domain_verified_by_other_organization',
      });
    }
    // No other organization can claim a domain another holds verified, pending or verified,
    // and the refused create stores nothing.
    const before = await storedCounts(env);
    for (const state of ['pending', 'verified'] as const) {
      await expect(
        env.caller.organizations.create({ name: 'D', domain_data: [{ domain, state }] }),
      ).rejects.toMatchObject({ status: 409, apiCode: 'domain_verified_by_other_organization' });
    }
    expect(await storedCounts(env)).toEqual(before);
  });

  it('refuses consumer and malformed domains in domain_data, listing every bad entry, storing nothing', async () => {
    const env = await newEnvironment();
    const error = await env.caller.organizations
      .create({
        name: 'Bad',
        domain_data: [
          { domain: 'gmail.com', state: 'pending' },
          { domain: uniqueDomain(), state: 'pending' },
          { domain: 'co.uk', state: 'pending' },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 422, apiCode: 'invalid_request_parameters' });
    expect((error as { errors: { field: string; code: string }[] }).errors).toEqual([
      expect.objectContaining({ field: 'domain_data.0.domain', code: 'consumer_domain' }),
      expect.objectContaining({ field: 'domain_data.2.domain', code: 'invalid_domain' }),
    ]);
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
  });
});

/** Organizations of a fresh environment, oldest first (ids are in creation order). */
async function seed(count: number) {
  const env = await newEnvironment();
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const org = await env.caller.organizations.create({ name: `Org ${i + 1}` });
    ids.push(org.id);
  }
  return { env, ids };
}

describe('organization lists (prepared keyset reads)', () => {
  it('walks every page in the default desc order with exact list_metadata', async () => {
    const { env, ids } = await seed(5);
    const [o1, o2, o3, o4, o5] = ids;
    const page1 = await env.caller.organizations.list({ limit: 2 });
    expect(page1.data.map((o) => o.id)).toEqual([o5, o4]);
    expect(page1.list_metadata).toEqual({ before: null, after: o4 });
    const page2 = await env.caller.organizations.list({ limit: 2, after: o4 });
    expect(page2.data.map((o) => o.id)).toEqual([o3, o2]);
    expect(page2.list_metadata).toEqual({ before: o3, after: o2 });
    const page3 = await env.caller.organizations.list({ limit: 2, after: o2 });
    expect(page3.data.map((o) => o.id)).toEqual([o1]);
    expect(page3.list_metadata).toEqual({ before: o1, after: null });
  });

  it('walks in asc order and says a page after the first row has a row before it', async () => {
    const { env, ids } = await seed(4);
    const [o1, o2, o3, o4] = ids;
    const page = await env.caller.organizations.list({ limit: 2, order: 'asc', after: o1 });
    expect(page.data.map((o) => o.id)).toEqual([o2, o3]);
    expect(page.list_metadata).toEqual({ before: o2, after: o3 });
    const last = await env.caller.organizations.list({ limit: 2, order: 'asc', after: o3 });
    expect(last.data.map((o) => o.id)).toEqual([o4]);
    expect(last.list_metadata).toEqual({ before: o4, after: null });
    const beyond = await env.caller.organizations.list({ limit: 2, order: 'asc', after: o4 });
    expect(beyond.data).toEqual([]);
    expect(beyond.list_metadata).toEqual({ before: null, after: null });
  });

  it('pages backwards with a before cursor', async () => {
    const { env, ids } = await seed(5);
    const [, o2, o3, o4] = ids;
    const page = await env.caller.organizations.list({ limit: 2, before: o2 });
    expect(page.data.map((o) => o.id)).toEqual([o4, o3]);
    expect(page.list_metadata).toEqual({ before: o4, after: o3 });
  });

  it('keeps working when the cursor object has been deleted', async () => {
    const { env, ids } = await seed(5);
    const [o1, o2, o3, o4] = ids;
    await env.caller.organizations.delete({ id: o3 as string });
    const page = await env.caller.organizations.list({ limit: 2, after: o3 });
    expect(page.data.map((o) => o.id)).toEqual([o2, o1]);
    expect(page.list_metadata).toEqual({ before: o2, after: null });
    const back = await env.caller.organizations.list({ limit: 5, before: o3 });
    expect(back.data.map((o) => o.id)).toEqual([ids[4], o4]);
    expect(back.list_metadata).toEqual({ before: null, after: o4 });
  });

  it('never shows or reads another environment’s organizations', async () => {
    const mine = await seed(2);
    const other = await seed(2);
    const list = await mine.env.caller.organizations.list({ limit: 10 });
    expect(list.data.map((o) => o.id).sort()).toEqual([...mine.ids].sort());
    await expect(mine.env.caller.organizations.get({ id: other.ids[0] as string })).rejects.toMatchObject({
      status: 404,
      apiCode: 'entity_not_found',
    });
    const paged = await mine.env.caller.organizations.list({ limit: 10, after: other.ids[1] });
    expect(paged.data.every((o) => mine.ids.includes(o.id))).toBe(true);
  });

  it('returns the domains with an organization read by id and in lists, and filters by domain', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain('paged');
    const withDomain = await env.caller.organizations.create({
      name: 'With domain',
      domain_data: [{ domain, state: 'pending' }],
    });
    await env.caller.organizations.create({ name: 'Without' });
    const read = await env.caller.organizations.get({ id: withDomain.id });
    expect(read.domains.map((d) => d.domain)).toEqual([domain]);
    const filtered = await env.caller.organizations.list({ domains: [domain.toUpperCase()] });
    expect(filtered.data.map((o) => o.id)).toEqual([withDomain.id]);
    expect(filtered.data[0]?.domains[0]?.domain).toBe(domain);
  });
});

describe('organization lists filtered by domains', () => {
  it('pages through the organizations owning any of several domains', async () => {
    const env = await newEnvironment();
    const [a, b, c] = [uniqueDomain('fa'), uniqueDomain('fb'), uniqueDomain('fc')];
    const orgA = await env.caller.organizations.create({ name: 'A', domain_data: [{ domain: a, state: 'pending' }] });
    await env.caller.organizations.create({ name: 'B', domain_data: [{ domain: b, state: 'pending' }] });
    const orgC = await env.caller.organizations.create({ name: 'C', domain_data: [{ domain: c, state: 'verified' }] });
    const page1 = await env.caller.organizations.list({ domains: [a, c], limit: 1 });
    expect(page1.data.map((o) => o.id)).toEqual([orgC.id]);
    expect(page1.list_metadata).toEqual({ before: null, after: orgC.id });
    const page2 = await env.caller.organizations.list({ domains: [a, c], limit: 1, after: orgC.id });
    expect(page2.data.map((o) => o.id)).toEqual([orgA.id]);
    expect(page2.list_metadata).toEqual({ before: orgA.id, after: null });
    const none = await env.caller.organizations.list({ domains: [uniqueDomain('nobody')] });
    expect(none.data).toEqual([]);
  });

  it('accepts the SDK’s comma-separated encoding over HTTP', async () => {
    const env = await newEnvironment();
    const [a, b] = [uniqueDomain('ha'), uniqueDomain('hb')];
    const orgA = await env.caller.organizations.create({ name: 'A', domain_data: [{ domain: a, state: 'pending' }] });
    const orgB = await env.caller.organizations.create({ name: 'B', domain_data: [{ domain: b, state: 'pending' }] });
    const res = await env.http.get(`/organizations?domains=${a},${b.toUpperCase()}&order=asc`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: { id: string }) => o.id)).toEqual([orgA.id, orgB.id]);
  });
});

describe('organization create answers what was stored', () => {
  it.each([
    ['without domain data', {}],
    ['with domain data', { domain_data: [{ domain: uniqueDomain('created'), state: 'verified' as const }] }],
  ])('%s', async (_label, extra) => {
    const env = await newEnvironment();
    const created = await env.caller.organizations.create({
      name: 'Stored',
      external_id: `ext-${Date.now()}`,
      metadata: { tier: 'gold' },
      ...extra,
    });
    const read = await env.caller.organizations.get({ id: created.id });
    expect(created).toEqual(read);
    expect(read.domains).toHaveLength('domain_data' in extra ? 1 : 0);
  });
});

/**
 * Organization reads come from one positional JSON array PostgreSQL builds (organizations/store.ts,
 * `organizationTuple`), decoded without Drizzle's relational mapping or Dates. They must answer
 * exactly what mapping the stored rows through `toOrganization` answers (the create path's
 * mapping), timestamps of every fraction length included.
 */
describe('organization reads', () => {
  it('answer get, list, external id and filter exactly as the stored rows map, on either driver', async () => {
    const env = await newEnvironment();
    const a = await env.caller.organizations.create({
      name: 'Reads A',
      external_id: 'reads-a',
      metadata: { tier: 'gold', a: 'x' },
      domain_data: [
        { domain: 'reads-a.com', state: 'verified' },
        { domain: 'reads-a2.com', state: 'pending' },
      ],
    });
    const b = await env.caller.organizations.create({ name: 'Reads B', allow_profiles_outside_organization: true });
    // Timestamps with no fraction, one, two and three digits.
    const db = env.deps.db;
    await db.execute(
      sql`update organizations set created_at = '2026-01-02 03:04:05+00', updated_at = '2026-01-02 03:04:05.1+00' where id = ${a.id}`,
    );
    await db.execute(
      sql`update organization_domains set created_at = '2026-01-02 03:04:05.12+00', updated_at = '2026-01-02 03:04:05.123+00' where organization_id = ${a.id}`,
    );
    await db.execute(
      sql`update organizations set billing_customer_id = 'cus_1', created_at = '1999-12-31 23:59:59.999+00' where id = ${b.id}`,
    );

    const expected = async (id: string) => {
      const row = await db.query.organizations.findFirst({
        where: eq(organizations.id, id),
        with: { domains: { orderBy: [asc(organizationDomains.id)] } },
      });
      return toOrganization(row!);
    };
    const [wantA, wantB] = [await expected(a.id), await expected(b.id)];
    expect(wantA.created_at).toBe('2026-01-02T03:04:05.000Z');
    expect(wantA.updated_at).toBe('2026-01-02T03:04:05.100Z');
    expect(wantA.domains.map((d) => [d.created_at, d.updated_at])).toEqual([
      ['2026-01-02T03:04:05.120Z', '2026-01-02T03:04:05.123Z'],
      ['2026-01-02T03:04:05.120Z', '2026-01-02T03:04:05.123Z'],
    ]);
    expect(wantB.created_at).toBe('1999-12-31T23:59:59.999Z');

    expect(await env.caller.organizations.get({ id: a.id })).toStrictEqual(wantA);
    expect(await env.caller.organizations.get({ id: b.id })).toStrictEqual(wantB);
    expect(await env.caller.organizations.getByExternalId({ external_id: 'reads-a' })).toStrictEqual(wantA);
    const page = await env.caller.organizations.list({ limit: 10, order: 'asc' });
    expect(page.data).toStrictEqual([wantA, wantB]);
    expect(page.list_metadata).toEqual({ before: null, after: null });
    const filtered = await env.caller.organizations.list({ domains: ['reads-a2.com'] });
    expect(filtered.data).toStrictEqual([wantA]);
    // Key order too: what the REST facade serialises.
    expect(JSON.stringify(await env.caller.organizations.get({ id: a.id }))).toBe(JSON.stringify(wantA));
  });

  it.each([
    ['2026-11-22T18:49:52+00:00', '2026-11-22T18:49:52.000Z'],
    ['2026-11-22T18:49:52.1+00:00', '2026-11-22T18:49:52.100Z'],
    ['2026-11-22T18:49:52.12+00:00', '2026-11-22T18:49:52.120Z'],
    ['2026-11-22T18:49:52.123+00:00', '2026-11-22T18:49:52.123Z'],
    ['2026-11-22T18:49:52.123999+00:00', '2026-11-22T18:49:52.123Z'],
    ['2026-11-22T20:19:52.5+01:30', '2026-11-22T18:49:52.500Z'],
    ['2026-11-22T13:49:52-05:00', '2026-11-22T18:49:52.000Z'],
  ])('turns the JSON timestamp %s into %s, as a Date would', (text, iso) => {
    expect(isoOfJson(text)).toBe(iso);
    expect(new Date(text).toISOString()).toBe(iso);
  });
});
