import { organizationApiKeys } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

const storedKeys = (env: TestEnvironment) =>
  env.deps.db.select().from(organizationApiKeys).where(eq(organizationApiKeys.environmentId, env.environmentId));

const keyEvents = async (env: TestEnvironment) =>
  (await storedEvents(env)).filter((e) => e.event.startsWith('api_key.'));

// The shared database is migrated once, within the hook's time rather than the first test's.
beforeAll(() => getWorld().then(() => undefined));

let people = 0;

/**
 * An environment with permissions `posts:read` and `posts:write`, a role `reader` (read only) and
 * a role `writer` (both), an organization and a user who is a `reader` member of it.
 */
async function world(env?: TestEnvironment) {
  const e = env ?? (await newEnvironment());
  for (const slug of ['posts:read', 'posts:write']) {
    expect((await e.http.post('/authorization/permissions', { slug, name: slug })).status).toBe(201);
  }
  for (const [slug, permissions] of [
    ['reader', ['posts:read']],
    ['writer', ['posts:read', 'posts:write']],
  ] as const) {
    expect((await e.http.post('/authorization/roles', { slug, name: slug })).status).toBe(201);
    expect((await e.http.put(`/authorization/roles/${slug}/permissions`, { permissions })).status).toBe(200);
  }
  const org = await e.http.post('/organizations', { name: 'Acme' });
  expect(org.status).toBe(201);
  people += 1;
  const user = await e.http.post('/user_management/users', { email: `keys-${process.pid}-${people}@example.com` });
  expect(user.status).toBe(201);
  const membership = await e.http.post('/user_management/organization_memberships', {
    user_id: user.body.id,
    organization_id: org.body.id,
    role_slug: 'reader',
  });
  expect(membership.status).toBe(201);
  return { env: e, org: org.body.id as string, user: user.body.id as string, membership: membership.body.id as string };
}

describe('REST: user API keys (upstream /user_management/users/:id/api_keys)', () => {
  it('creates (201, value once), lists (paged), validates and revokes a user key, with its events', {
    timeout: 90_000,
  }, async () => {
    const { env, org, user } = await world();
    const path = `/user_management/users/${user}/api_keys`;
    const created = await env.http.post(path, { name: ' CLI ', organization_id: org, permissions: ['posts:read'] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'api_key',
      id: expect.stringMatching(/^api_key_/),
      owner: { type: 'user', id: user, organization_id: org },
      name: 'CLI',
      obfuscated_value: `sk_org_…${created.body.value.slice(-4)}`,
      value: expect.stringMatching(/^sk_org_[0-9A-Za-z]{40}$/),
      last_used_at: null,
      permissions: ['posts:read'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const { value, ...shown } = created.body;
    const second = await env.http.post(path, { name: 'plain', organization_id: org });
    expect(second.status).toBe(201);
    expect(second.body.permissions).toEqual([]);

    const page1 = await env.http.get(`${path}?limit=1&order=asc`);
    expect(page1.status).toBe(200);
    expect(page1.body).toEqual({ object: 'list', data: [shown], list_metadata: { before: null, after: shown.id } });
    const page2 = await env.http.get(`${path}?limit=1&order=asc&after=${shown.id}`);
    expect(page2.body.data.map((k: { id: string }) => k.id)).toEqual([second.body.id]);
    const filtered = await env.http.get(`${path}?organization_id=${org}`);
    expect(filtered.body.data).toHaveLength(2);
    // The organization's own list shows its own keys only, not its members'.
    expect((await env.http.get(`/organizations/${org}/api_keys`)).body.data).toEqual([]);

    const valid = await env.http.post('/api_keys/validations', { value });
    expect(valid.status).toBe(200);
    expect(valid.body).toEqual({ api_key: shown });

    expect((await env.http.delete(`/api_keys/${shown.id}`)).status).toBe(204);
    expect((await env.http.post('/api_keys/validations', { value })).body).toEqual({ api_key: null });
    expect((await storedKeys(env)).map((k) => k.id)).toEqual([second.body.id]);

    const recorded = await keyEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['api_key.created', 'api_key.created', 'api_key.revoked']);
    expect(recorded[0]?.data).toEqual(shown);
    expect(recorded[2]?.data).toEqual(shown);
    expect(JSON.stringify(recorded)).not.toContain(value);
    expect(recorded.every((e) => e.organizationId === org)).toBe(true);
  });

  it("caps a key's permissions at the user's in the organization (422 naming permissions, nothing stored)", async () => {
    const { env, org, user } = await world();
    const before = await snapshot(env);
    for (const permissions of [['posts:write'], ['posts:read', 'posts:write'], ['no:such']]) {
      const res = await env.http.post(`/user_management/users/${user}/api_keys`, {
        name: 'too much',
        organization_id: org,
        permissions,
      });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors).toEqual([
        { field: 'permissions', code: 'permission_not_held', message: expect.stringContaining(permissions.at(-1)!) },
      ]);
    }
    expect(await snapshot(env)).toEqual(before);
    expect(await keyEvents(env)).toEqual([]);
  });

  it('validates a user key against the permissions the user holds now, and not while inactive', async () => {
    const { env, org, user, membership } = await world();
    expect(
      (await env.http.put(`/user_management/organization_memberships/${membership}`, { role_slug: 'writer' })).status,
    ).toBe(200);
    const created = await env.http.post(`/user_management/users/${user}/api_keys`, {
      name: 'writer key',
      organization_id: org,
      permissions: ['posts:read', 'posts:write'],
    });
    expect(created.status).toBe(201);
    const validate = async () => (await env.http.post('/api_keys/validations', { value: created.body.value })).body;

    // Moved back to `reader`: the key no longer carries posts:write, and the stored grant stays.
    await env.http.put(`/user_management/organization_memberships/${membership}`, { role_slug: 'reader' });
    expect((await validate()).api_key.permissions).toEqual(['posts:read']);
    // The role loses its permission too: the key carries none.
    await env.http.put('/authorization/roles/reader/permissions', { permissions: [] });
    expect((await validate()).api_key.permissions).toEqual([]);
    // Promoted again: back to what it was created with, never more.
    await env.http.put(`/user_management/organization_memberships/${membership}`, { role_slug: 'writer' });
    expect((await validate()).api_key.permissions).toEqual(['posts:read', 'posts:write']);
    // A deactivated membership's keys do not validate; reactivated, they do.
    expect((await env.http.put(`/user_management/organization_memberships/${membership}/deactivate`)).status).toBe(200);
    expect(await validate()).toEqual({ api_key: null });
    await env.http.put(`/user_management/organization_memberships/${membership}/reactivate`);
    expect((await validate()).api_key.id).toBe(created.body.id);
    const [row] = await storedKeys(env);
    expect(row?.permissions).toEqual(['posts:read', 'posts:write']);
  });

  it("revokes the user's keys when their membership or the user is deleted (api_key.revoked each)", async () => {
    const { env, org, user, membership } = await world();
    const other = await env.http.post('/organizations', { name: 'Globex' });
    await env.http.post('/user_management/organization_memberships', { user_id: user, organization_id: other.body.id });
    const inAcme = await env.http.post(`/user_management/users/${user}/api_keys`, { name: 'a', organization_id: org });
    const inGlobex = await env.http.post(`/user_management/users/${user}/api_keys`, {
      name: 'g',
      organization_id: other.body.id,
    });
    expect((await env.http.delete(`/user_management/organization_memberships/${membership}`)).status).toBe(204);
    expect((await storedKeys(env)).map((k) => k.id)).toEqual([inGlobex.body.id]);
    expect((await env.http.post('/api_keys/validations', { value: inAcme.body.value })).body).toEqual({
      api_key: null,
    });

    expect((await env.http.delete(`/user_management/users/${user}`)).status).toBe(204);
    expect(await storedKeys(env)).toEqual([]);
    const revoked = (await keyEvents(env)).filter((e) => e.event === 'api_key.revoked').map((e) => e.data);
    expect(revoked.map((d) => (d as { id: string }).id)).toEqual([inAcme.body.id, inGlobex.body.id]);
  });

  it.each([
    ['no name', (org: string) => ({ organization_id: org }), 'name'],
    ['an empty name', (org: string) => ({ name: ' ', organization_id: org }), 'name'],
    ['no organization_id', () => ({ name: 'k' }), 'organization_id'],
    [
      'permissions not an array',
      (org: string) => ({ name: 'k', organization_id: org, permissions: 'a' }),
      'permissions',
    ],
    [
      'a bad permission slug',
      (org: string) => ({ name: 'k', organization_id: org, permissions: ['a b'] }),
      'permissions',
    ],
  ])('refuses %s with 422 and stores nothing', async (_label, body, field) => {
    const { env, org, user } = await world();
    const before = await snapshot(env);
    const res = await env.http.post(`/user_management/users/${user}/api_keys`, body(org));
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors.some((e: { field: string }) => e.field.split('.')[0] === field)).toBe(true);
    expect(await snapshot(env)).toEqual(before);
  });

  it('refuses a user who is not an active member (422), and unknown users or organizations (404)', async () => {
    const { env, org, user } = await world();
    const stranger = await env.http.post('/organizations', { name: 'Stranger' });
    const before = await snapshot(env);
    const notMember = await env.http.post(`/user_management/users/${user}/api_keys`, {
      name: 'k',
      organization_id: stranger.body.id,
    });
    expect(notMember.status).toBe(422);
    expect(notMember.body.errors).toEqual([
      { field: 'organization_id', code: 'organization_membership_required', message: expect.any(String) },
    ]);
    const unknownUser = await env.http.post('/user_management/users/user_01HZZZZZZZZZZZZZZZZZZZZZZZ/api_keys', {
      name: 'k',
      organization_id: org,
    });
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.code).toBe('entity_not_found');
    const unknownOrg = await env.http.post(`/user_management/users/${user}/api_keys`, {
      name: 'k',
      organization_id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    });
    expect(unknownOrg.status).toBe(404);
    expect((await env.http.get('/user_management/users/user_01HZZZZZZZZZZZZZZZZZZZZZZZ/api_keys')).status).toBe(404);
    expect((await env.http.get(`/user_management/users/${user}/api_keys?organization_id=org_nope`)).status).toBe(404);
    expect(await snapshot(env)).toEqual(before);
  });

  it("keeps user keys to their environment: another environment's user and key are 404 and null", async () => {
    const mine = await newEnvironment();
    const theirs = await world();
    const key = await theirs.env.http.post(`/user_management/users/${theirs.user}/api_keys`, {
      name: 'theirs',
      organization_id: theirs.org,
    });
    const before = await snapshot(theirs.env);
    for (const res of [
      await mine.http.get(`/user_management/users/${theirs.user}/api_keys`),
      await mine.http.post(`/user_management/users/${theirs.user}/api_keys`, {
        name: 'x',
        organization_id: theirs.org,
      }),
      await mine.http.delete(`/api_keys/${key.body.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    expect((await mine.http.post('/api_keys/validations', { value: key.body.value })).body).toEqual({ api_key: null });
    expect(await snapshot(theirs.env)).toEqual(before);
    expect(await storedKeys(mine)).toEqual([]);
  });
});
