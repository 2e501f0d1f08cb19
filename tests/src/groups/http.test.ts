import { groupMemberships, groups, newId, organizationMemberships, users } from '@atrium/db';
import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { newMember, uniqueEmail } from '../helpers/people.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function setup() {
  const env = await newEnvironment();
  const { organizationId, membership, user } = await newMember(env);
  return { env, organizationId, membership, user, base: `/organizations/${organizationId}/groups` };
}

async function storedGroups(env: TestEnvironment) {
  return env.deps.db.select().from(groups).where(eq(groups.environmentId, env.environmentId));
}

describe('groups over HTTP', () => {
  it('POST creates a group with 201 and the specified shape', async () => {
    const { env, organizationId, base } = await setup();
    const res = await env.http.post(base, { name: 'Engineering', description: 'Builders' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(
      ['object', 'id', 'organization_id', 'name', 'description', 'created_at', 'updated_at'].sort(),
    );
    expect(res.body).toMatchObject({
      object: 'group',
      organization_id: organizationId,
      name: 'Engineering',
      description: 'Builders',
    });
    expect(res.body.id).toMatch(/^group_[0-9A-Z]{26}$/);
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.updated_at).toMatch(ISO);
  });

  it('POST accepts description: null (the SDK sends it)', async () => {
    const { env, base } = await setup();
    const res = await env.http.post(base, { name: 'G', description: null });
    expect(res.status).toBe(201);
    expect(res.body.description).toBeNull();
  });

  it('GET reads, lists with the list envelope, and DELETE answers 204 without a body', async () => {
    const { env, base } = await setup();
    const a = (await env.http.post(base, { name: 'A' })).body;
    const b = (await env.http.post(base, { name: 'B' })).body;
    const one = await env.http.get(`${base}/${a.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(a);

    const list = await env.http.get(base);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [b, a], list_metadata: { before: null, after: null } });
    const asc = await env.http.get(`${base}?order=asc&limit=1`);
    expect(asc.body.data).toEqual([a]);
    expect(asc.body.list_metadata).toEqual({ before: null, after: a.id });

    const del = await env.http.delete(`${base}/${a.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await env.http.get(`${base}/${a.id}`)).status).toBe(404);
    expect((await storedGroups(env)).map((g) => g.id)).toEqual([b.id]);
  });

  it('PATCH with only name, only description, and description: null', async () => {
    const { env, base } = await setup();
    const g = (await env.http.post(base, { name: 'A', description: 'first' })).body;

    const r1 = await env.http.patch(`${base}/${g.id}`, { name: 'B' });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ name: 'B', description: 'first' });

    const r2 = await env.http.patch(`${base}/${g.id}`, { description: 'second' });
    expect(r2.body).toMatchObject({ name: 'B', description: 'second' });

    const r3 = await env.http.patch(`${base}/${g.id}`, { description: null });
    expect(r3.body).toMatchObject({ name: 'B', description: null });

    const r4 = await env.http.patch(`${base}/${g.id}`, {});
    expect(r4.status).toBe(200);
    expect(r4.body).toEqual(r3.body);
  });

  describe.each([
    ['no name', {}, 'name', 'name_required'],
    ['an empty name', { name: '' }, 'name', 'name_invalid'],
    ['a 257-char name', { name: 'x'.repeat(257) }, 'name', 'name_invalid'],
    ['a 151-char description', { name: 'G', description: 'x'.repeat(151) }, 'description', 'description_invalid'],
    ['a numeric description', { name: 'G', description: 5 }, 'description', 'description_invalid'],
  ])('POST with %s', (_label, body, field, code) => {
    it('is 422 with the contract body and stores nothing', async () => {
      const { env, base } = await setup();
      const res = await env.http.post(base, body);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, code }));
      expect(await storedGroups(env)).toEqual([]);
    });
  });

  it('PATCH with a bad field is 422 and changes nothing', async () => {
    const { env, base } = await setup();
    const g = (await env.http.post(base, { name: 'A', description: 'keep' })).body;
    const res = await env.http.patch(`${base}/${g.id}`, { name: '', description: 'changed' });
    expect(res.status).toBe(422);
    expect((await env.http.get(`${base}/${g.id}`)).body).toEqual(g);
  });

  it('malformed JSON is 400 invalid_json and a body without JSON content type is 415', async () => {
    const { env, base } = await setup();
    const bad = await env.http.request('POST', base, {
      raw: '{"name":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_json');
    const text = await env.http.request('POST', base, { raw: 'name=G', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(await storedGroups(env)).toEqual([]);
  });

  it('adds memberships (200, the group), lists them, removes one (204) and the membership survives', async () => {
    const { env, organizationId, membership, base } = await setup();
    const second = await newMember(env, organizationId);
    const g = (await env.http.post(base, { name: 'G' })).body;
    const path = `${base}/${g.id}/organization-memberships`;

    const add = await env.http.post(path, { organization_membership_id: membership.id });
    expect(add.status).toBe(200);
    expect(add.body).toEqual(g);
    const twice = await env.http.post(path, { organization_membership_id: membership.id });
    expect(twice.status).toBe(200);
    expect(twice.body).toEqual(g);
    await env.http.post(path, { organization_membership_id: second.membership.id });

    const list = await env.http.get(`${path}?order=asc`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      object: 'list',
      data: [membership, second.membership],
      list_metadata: { before: null, after: null },
    });
    expect(list.body.data[1].user).toEqual(second.user);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(
      [
        'object',
        'id',
        'user_id',
        'organization_id',
        'organization_name',
        'status',
        'directory_managed',
        'custom_attributes',
        'role',
        'roles',
        'created_at',
        'updated_at',
        'user',
      ].sort(),
    );
    expect(list.body.data[0]).toMatchObject({
      object: 'organization_membership',
      status: 'active',
      directory_managed: false,
      organization_name: 'Acme',
      custom_attributes: {},
    });

    const remove = await env.http.delete(`${path}/${membership.id}`);
    expect(remove.status).toBe(204);
    expect(remove.text).toBe('');
    expect((await env.http.get(path)).body.data).toEqual([second.membership]);
    const kept = await env.http.get(`/user_management/organization_memberships/${membership.id}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toEqual(membership);
    expect((await env.http.delete(`${path}/${membership.id}`)).status).toBe(404);
  });

  it('adding needs organization_membership_id (422) and refuses a foreign membership (404)', async () => {
    const { env, base } = await setup();
    const g = (await env.http.post(base, { name: 'G' })).body;
    const path = `${base}/${g.id}/organization-memberships`;
    const missing = await env.http.post(path, {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toContainEqual(
      expect.objectContaining({ field: 'organization_membership_id', code: 'organization_membership_id_required' }),
    );
    const otherOrg = await newMember(env);
    const foreign = await env.http.post(path, { organization_membership_id: otherOrg.membership.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('entity_not_found');
    const strangerEnv = await newEnvironment();
    const stranger = await newMember(strangerEnv);
    expect((await env.http.post(path, { organization_membership_id: stranger.membership.id })).status).toBe(404);
    const stored = await env.deps.db.select().from(groupMemberships).where(eq(groupMemberships.groupId, g.id));
    expect(stored).toEqual([]);
  });

  it('lists the groups of one membership at upstream path', async () => {
    const { env, membership, base } = await setup();
    const a = (await env.http.post(base, { name: 'A' })).body;
    const b = (await env.http.post(base, { name: 'B' })).body;
    await env.http.post(`${base}/${a.id}/organization-memberships`, { organization_membership_id: membership.id });
    await env.http.post(`${base}/${b.id}/organization-memberships`, { organization_membership_id: membership.id });
    const res = await env.http.get(`/user_management/organization_memberships/${membership.id}/groups`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'list', data: [b, a], list_metadata: { before: null, after: null } });
    const page = await env.http.get(`/user_management/organization_memberships/${membership.id}/groups?limit=1`);
    expect(page.body).toEqual({ object: 'list', data: [b], list_metadata: { before: null, after: b.id } });
    const next = await env.http.get(
      `/user_management/organization_memberships/${membership.id}/groups?limit=1&after=${b.id}`,
    );
    expect(next.body).toEqual({ object: 'list', data: [a], list_metadata: { before: a.id, after: null } });
  });

  it('is 404 through another organization and through another environment key', async () => {
    const { env, membership, base } = await setup();
    const other = (await env.http.post('/organizations', { name: 'Other' })).body;
    const g = (await env.http.post(base, { name: 'G' })).body;
    await env.http.post(`${base}/${g.id}/organization-memberships`, { organization_membership_id: membership.id });
    const wrong = `/organizations/${other.id}/groups/${g.id}`;
    for (const res of [
      await env.http.get(wrong),
      await env.http.patch(wrong, { name: 'X' }),
      await env.http.delete(wrong),
      await env.http.get(`${wrong}/organization-memberships`),
      await env.http.post(`${wrong}/organization-memberships`, { organization_membership_id: membership.id }),
      await env.http.delete(`${wrong}/organization-memberships/${membership.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'entity_not_found', message: `Group not found: '${g.id}'.` });
    }
    const stranger = await newEnvironment();
    const same = `${base}/${g.id}`;
    expect((await stranger.http.get(same)).status).toBe(404);
    expect((await stranger.http.patch(same, { name: 'X' })).status).toBe(404);
    expect((await stranger.http.delete(same)).status).toBe(404);
    expect((await stranger.http.get(`${same}/organization-memberships`)).status).toBe(404);
    expect((await stranger.http.delete(`${same}/organization-memberships/${membership.id}`)).status).toBe(404);
    expect((await stranger.http.get(base)).status).toBe(404);
    expect((await stranger.http.post(base, { name: 'X' })).status).toBe(404);
    // Nothing changed.
    expect((await env.http.get(same)).body).toEqual(g);
    expect((await env.http.get(`${same}/organization-memberships`)).body.data).toHaveLength(1);
  });

  it.each(['membership', 'user', 'organization'] as const)('DELETE of the %s cascades to group links', async (what) => {
    const { env, organizationId, membership, user, base } = await setup();
    const g = (await env.http.post(base, { name: 'G' })).body;
    await env.http.post(`${base}/${g.id}/organization-memberships`, { organization_membership_id: membership.id });
    const target = {
      membership: `/user_management/organization_memberships/${membership.id}`,
      user: `/user_management/users/${user.id}`,
      organization: `/organizations/${organizationId}`,
    }[what];
    expect((await env.http.delete(target)).status).toBe(204);
    const links = await env.deps.db
      .select()
      .from(groupMemberships)
      .where(eq(groupMemberships.environmentId, env.environmentId));
    expect(links).toEqual([]);
    if (what !== 'organization') {
      expect((await env.http.get(`${base}/${g.id}/organization-memberships`)).body.data).toEqual([]);
    }
  });

  it('is 401 without a key and 403 feature_not_enabled with the flag off', async () => {
    const { env, base } = await setup();
    const anonymous = new HttpClient(env.world.url);
    const res = await anonymous.get(base);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');

    const off = await newEnvironment({ flags: { groups: false } });
    const { organizationId, membership } = await newMember(off);
    const offBase = `/organizations/${organizationId}/groups`;
    const g = 'group_01HE8GSH8FQPASKSY27THRKRBP';
    for (const r of [
      await off.http.get(offBase),
      await off.http.post(offBase, { name: 'G' }),
      await off.http.get(`${offBase}/${g}`),
      await off.http.patch(`${offBase}/${g}`, { name: 'G' }),
      await off.http.delete(`${offBase}/${g}`),
      await off.http.get(`${offBase}/${g}/organization-memberships`),
      await off.http.post(`${offBase}/${g}/organization-memberships`, { organization_membership_id: membership.id }),
      await off.http.delete(`${offBase}/${g}/organization-memberships/${membership.id}`),
      await off.http.get(`/user_management/organization_memberships/${membership.id}/groups`),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('feature_not_enabled');
    }
    expect(await storedGroups(off)).toEqual([]);
  });

  it('50 parallel adds of the same membership over HTTP: all 200, one link', async () => {
    const { env, membership, base } = await setup();
    const g = (await env.http.post(base, { name: 'G' })).body;
    const path = `${base}/${g.id}/organization-memberships`;
    const results = await Promise.all(
      Array.from({ length: 50 }, () => env.http.post(path, { organization_membership_id: membership.id })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const links = await env.deps.db.select().from(groupMemberships).where(eq(groupMemberships.groupId, g.id));
    expect(links).toHaveLength(1);
  });

  it("lists only the organization's groups and refuses bad list parameters with 422", async () => {
    const { env, base } = await setup();
    const mine = (await env.http.post(base, { name: 'Mine' })).body;
    const other = (await env.http.post('/organizations', { name: 'Other' })).body;
    await env.http.post(`/organizations/${other.id}/groups`, { name: 'Theirs' });
    expect((await env.http.get(base)).body.data).toEqual([mine]);
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'order=sideways', `after=${mine.id}&before=${mine.id}`]) {
      const res = await env.http.get(`${base}?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
    }
    const normal = await env.http.get(`${base}?order=normal&limit=100`);
    expect(normal.status).toBe(200);
  });

  it('the OpenAPI document lists every group path', async () => {
    const { env } = await setup();
    const doc = await env.http.get('/openapi.json');
    const paths = Object.keys(doc.body.paths);
    for (const p of [
      '/organizations/{organization_id}/groups',
      '/organizations/{organization_id}/groups/{group_id}',
      '/organizations/{organization_id}/groups/{group_id}/organization-memberships',
      '/organizations/{organization_id}/groups/{group_id}/organization-memberships/{organization_membership_id}',
      '/user_management/organization_memberships/{id}/groups',
    ]) {
      expect(paths).toContain(p);
    }
  });
});

const TOTAL = 250;
const LIMIT = 7;

interface Page {
  data: { id: string }[];
  list_metadata: { before: string | null; after: string | null };
}

describe('a group with 250 memberships, walked with limit=7', () => {
  let env: TestEnvironment;
  let path: string;
  let ids: string[];

  beforeAll(async () => {
    env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Big' });
    const group = await env.caller.groups.create({ organization_id: org.id, name: 'Everyone' });
    // A membership outside the group, which must never show up.
    const outsider = await env.caller.users.create({ email: `outsider-${Date.now()}@example.com` });
    await env.caller.organizationMemberships.create({ user_id: outsider.id, organization_id: org.id });
    // Bulk setup (three statements) keeps the test fast; the walk below is all HTTP.
    const userRows = Array.from({ length: TOTAL }, (_, i) => ({
      id: newId('user'),
      environmentId: env.environmentId,
      email: `member-${i}-${Date.now()}@example.com`,
    }));
    const membershipRows = userRows.map((u) => ({
      id: newId('organizationMembership'),
      environmentId: env.environmentId,
      userId: u.id,
      organizationId: org.id,
    }));
    await env.deps.db.insert(users).values(userRows);
    await env.deps.db.insert(organizationMemberships).values(membershipRows);
    // Links inserted in shuffled order: the list order is the memberships' id order regardless.
    const shuffled = [...membershipRows].sort(() => Math.random() - 0.5);
    await env.deps.db
      .insert(groupMemberships)
      .values(
        shuffled.map((m) => ({ environmentId: env.environmentId, groupId: group.id, organizationMembershipId: m.id })),
      );
    ids = membershipRows.map((m) => m.id).sort();
    path = `/organizations/${org.id}/groups/${group.id}/organization-memberships`;
  });

  async function page(query: string): Promise<Page> {
    const res = await env.http.get<Page>(`${path}?${query}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  it.each(['asc', 'desc'] as const)('order=%s: forward with after, then back with before, exactly', async (order) => {
    const expected = order === 'asc' ? ids : [...ids].reverse();
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const p: Page = await page(`limit=${LIMIT}&order=${order}${cursor ? `&after=${cursor}` : ''}`);
      pages.push(p);
      cursor = p.list_metadata.after;
    } while (cursor && pages.length < 100);

    expect(pages).toHaveLength(Math.ceil(TOTAL / LIMIT));
    expect(pages.flatMap((p) => p.data.map((m) => m.id))).toEqual(expected);
    pages.forEach((p, i) => {
      const slice = expected.slice(i * LIMIT, (i + 1) * LIMIT);
      expect(p.data.map((m) => m.id)).toEqual(slice);
      expect(p.list_metadata.before).toBe(i === 0 ? null : slice[0]);
      expect(p.list_metadata.after).toBe(i === pages.length - 1 ? null : slice[slice.length - 1]);
    });

    // Backwards from the last page's first item, with `before`, to the start.
    const back: string[][] = [];
    let before: string | null = pages[pages.length - 1]?.list_metadata.before ?? null;
    while (before && back.length < 100) {
      const p: Page = await page(`limit=${LIMIT}&order=${order}&before=${before}`);
      back.unshift(p.data.map((m) => m.id));
      before = p.list_metadata.before;
    }
    const lastPage = pages[pages.length - 1]?.data.map((m) => m.id) ?? [];
    expect([...back.flat(), ...lastPage]).toEqual(expected);
  });
});

function clientOf(env: TestEnvironment) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${env.world.url}/trpc`, headers: () => ({ Authorization: `Bearer ${env.apiKey}` }) })],
  });
}

describe('the typed tRPC client', () => {
  it('sees users, memberships and groups (nested memberships) over /trpc', async () => {
    const env = await newEnvironment();
    const trpc = clientOf(env);
    const org = await trpc.organizations.create.mutate({ name: 'Acme' });
    const user = await trpc.users.create.mutate({ email: uniqueEmail() });
    const om = await trpc.organizationMemberships.create.mutate({ user_id: user.id, organization_id: org.id });
    const group = await trpc.groups.create.mutate({ organization_id: org.id, name: 'G' });
    const added = await trpc.groups.memberships.add.mutate({
      organization_id: org.id,
      group_id: group.id,
      organization_membership_id: om.id,
    });
    expect(added).toEqual(group);
    const members = await trpc.groups.memberships.list.query({ organization_id: org.id, group_id: group.id });
    expect(members.data).toEqual([om]);
    const groups = await trpc.groups.listForMembership.query({ id: om.id });
    expect(groups.data).toEqual([group]);

    const error = await trpc.groups.get
      .query({ organization_id: org.id, group_id: 'group_01HE8GSH8FQPASKSY27THRKRBP' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({
      httpStatus: 404,
      contract: { status: 404, body: { code: 'entity_not_found' } },
    });
  });
});
