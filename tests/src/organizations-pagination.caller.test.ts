import { describe, expect, it } from 'vitest';
import { newEnvironment, uniqueDomain } from './helpers/world.ts';

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

describe('organization reads over HTTP', () => {
  it('answers an unknown id with the contract 404 and a list with the envelope', async () => {
    const env = await newEnvironment();
    const missing = await env.http.get('/organizations/org_01HE8GSH8FQPASKSY27THRKRBP');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('entity_not_found');
    const created = await env.http.post('/organizations', { name: 'Wire' });
    const list = await env.http.get(`/organizations?limit=1&order=asc&after=${created.body.id}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [], list_metadata: { before: null, after: null } });
  });
});
