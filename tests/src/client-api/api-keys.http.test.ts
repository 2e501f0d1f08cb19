import { organizationApiKeys } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ClientSetup, clientSetup } from '../helpers/client.ts';
import { storedEvents } from '../helpers/events.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

// The ApiKeys and UserApiKeys widgets (issue #38): `/_widgets/ApiKeys/…` over the organization's
// keys (`widgets:api-keys:manage`) and `/_widgets/UserApiKeys/…` over its members' keys
// (`widgets:user-api-keys:manage-self` for one's own, `manage-all` for everyone's).

const KEY_SCOPES = ['widgets:api-keys:manage', 'widgets:user-api-keys:manage-self', 'widgets:user-api-keys:manage-all'];

const ROLES: Record<string, string[]> = {
  'keys-admin': ['widgets:api-keys:manage', 'widgets:user-api-keys:manage-all', 'posts:read', 'posts:write'],
  'keys-self': ['widgets:user-api-keys:manage-self', 'posts:read'],
  'keys-none': ['posts:read'],
};

/**
 * `posts:*` as permissions and the three roles above, made once per environment (the widgets'
 * scopes are system permissions every environment holds).
 */
async function ensureRoles(env: TestEnvironment) {
  for (const slug of ['posts:read', 'posts:write']) {
    const res = await env.http.post('/authorization/permissions', { slug, name: slug });
    if (res.status !== 201 && res.status !== 409) throw new Error(`permission: ${res.text}`);
  }
  for (const [slug, permissions] of Object.entries(ROLES)) {
    const role = await env.http.post('/authorization/roles', { slug, name: slug });
    if (role.status === 409) continue;
    expect((await env.http.put(`/authorization/roles/${slug}/permissions`, { permissions })).status).toBe(200);
  }
}

async function member(env: TestEnvironment, roleSlug: string, organizationId?: string): Promise<ClientSetup> {
  await ensureRoles(env);
  return clientSetup(env, { scopes: KEY_SCOPES, roleSlug, organizationId });
}

const storedKeys = (env: TestEnvironment) =>
  env.deps.db.select().from(organizationApiKeys).where(eq(organizationApiKeys.environmentId, env.environmentId));

beforeAll(() => getWorld());

/** The longer walks below make some thirty requests: on a loaded machine they need more than the default. */
const LONG = { timeout: 90_000 };

describe('ApiKeys widget: /_widgets/ApiKeys/…', () => {
  it('creates a key with permissions (value once), lists and searches it, expires and revokes it', LONG, async () => {
    const env = await newEnvironment();
    const admin = await member(env, 'keys-admin');

    const permissions = await admin.http.get('/_widgets/ApiKeys/permissions?limit=100');
    expect(permissions.status).toBe(200);
    expect(permissions.body.data).toEqual(
      expect.arrayContaining([{ id: expect.any(String), slug: 'posts:read', name: 'posts:read', description: null }]),
    );
    const searched = await admin.http.get('/_widgets/ApiKeys/permissions?search=posts:w');
    expect(searched.body.data.map((p: { slug: string }) => p.slug)).toEqual(['posts:write']);

    const created = await admin.http.post('/_widgets/ApiKeys/organization-api-keys', {
      name: 'Reporting',
      permissions: ['posts:read'],
      expiresAt: null,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^api_key_/),
      name: 'Reporting',
      value: expect.stringMatching(/^sk_org_[0-9A-Za-z]{40}$/),
      obfuscatedValue: `sk_org_…${created.body.value.slice(-4)}`,
      createdAt: expect.any(String),
      expiresAt: null,
      permissions: ['posts:read'],
    });
    const other = await admin.http.post('/_widgets/ApiKeys/organization-api-keys', { name: 'Other', permissions: [] });
    const { value, ...shown } = created.body;

    const list = await admin.http.get('/_widgets/ApiKeys/organization-api-keys?limit=10');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ ...shown, lastUsedAt: null }, expect.objectContaining({ id: other.body.id })]);
    expect(JSON.stringify(list.body)).not.toContain(value);
    const found = await admin.http.get('/_widgets/ApiKeys/organization-api-keys?search=report');
    expect(found.body.data.map((k: { id: string }) => k.id)).toEqual([shown.id]);
    // The REST view is the same key: one machinery.
    const rest = await env.http.post('/api_keys/validations', { value });
    expect(rest.body.api_key).toMatchObject({
      id: shown.id,
      owner: { type: 'organization', id: admin.organizationId },
    });

    // Expire (no time: now): it stops validating, stays listed with its expiry; again is 409.
    const expired = await admin.http.post(`/_widgets/ApiKeys/${shown.id}/expire`, {});
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ id: shown.id, expiresAt: expect.any(String) });
    expect((await env.http.post('/api_keys/validations', { value })).body).toEqual({ api_key: null });
    expect((await admin.http.post(`/_widgets/ApiKeys/${shown.id}/expire`, {})).status).toBe(409);

    // A later expiry keeps the key valid until then.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const moved = await admin.http.post(`/_widgets/ApiKeys/${other.body.id}/expire`, { expiresAt: later });
    expect(moved.body.expiresAt).toBe(later);
    expect((await env.http.post('/api_keys/validations', { value: other.body.value })).body.api_key.id).toBe(
      other.body.id,
    );

    const revoked = await admin.http.delete(`/_widgets/ApiKeys/${other.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true });
    expect((await storedKeys(env)).map((k) => k.id)).toEqual([shown.id]);
    const events = (await storedEvents(env)).filter((e) => e.event.startsWith('api_key.')).map((e) => e.event);
    expect(events).toEqual(['api_key.created', 'api_key.created', 'api_key.revoked']);
  });

  it('refuses unknown permissions, a past expiry and bad names with 422, storing nothing', async () => {
    const env = await newEnvironment();
    const admin = await member(env, 'keys-admin');
    const before = await snapshot(env);
    for (const [body, field] of [
      [{ name: 'k', permissions: ['no:such'] }, 'permissions'],
      [{ name: 'k', permissions: ['a b'] }, 'permissions'],
      [{ name: 'k', permissions: [], expiresAt: '2001-01-01T00:00:00.000Z' }, 'expiresAt'],
      [{ name: 'k', permissions: [], expiresAt: 'soon' }, 'expiresAt'],
      [{ name: ' ', permissions: [] }, 'name'],
      [{ name: 'k' }, 'permissions'],
    ] as const) {
      const res = await admin.http.post('/_widgets/ApiKeys/organization-api-keys', body);
      expect(res.status).toBe(422);
      expect(res.body.errors.some((e: { field: string }) => e.field.split('.')[0] === field)).toBe(true);
    }
    expect(await snapshot(env)).toEqual(before);
  });

  it('a member without the scope is 403 on every route; another organization’s key is 404', async () => {
    const env = await newEnvironment();
    const admin = await member(env, 'keys-admin');
    const self = await member(env, 'keys-self', admin.organizationId);
    const stranger = await member(env, 'keys-admin');
    const key = await admin.http.post('/_widgets/ApiKeys/organization-api-keys', { name: 'k', permissions: [] });
    const before = await snapshot(env);
    for (const res of [
      await self.http.get('/_widgets/ApiKeys/organization-api-keys'),
      await self.http.get('/_widgets/ApiKeys/permissions'),
      await self.http.post('/_widgets/ApiKeys/organization-api-keys', { name: 'k', permissions: [] }),
      await self.http.post(`/_widgets/ApiKeys/${key.body.id}/expire`, {}),
      await self.http.delete(`/_widgets/ApiKeys/${key.body.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('widgets:api-keys:manage');
    }
    for (const res of [
      await stranger.http.post(`/_widgets/ApiKeys/${key.body.id}/expire`, {}),
      await stranger.http.delete(`/_widgets/ApiKeys/${key.body.id}`),
    ]) {
      expect(res.status).toBe(404);
    }
    expect((await stranger.http.get('/_widgets/ApiKeys/organization-api-keys')).body.data).toEqual([]);
    // An API key is not a widget token.
    expect((await env.http.get('/_widgets/ApiKeys/organization-api-keys')).status).toBe(403);
    expect(await snapshot(env)).toEqual(before);
  });
});

describe('UserApiKeys widget: /_widgets/UserApiKeys/…', () => {
  it(
    'manage-self: creates its own key within its permissions, lists only its own, expires and revokes it',
    LONG,
    async () => {
      const env = await newEnvironment();
      const admin = await member(env, 'keys-admin');
      const self = await member(env, 'keys-self', admin.organizationId);
      const adminKey = await admin.http.post('/_widgets/UserApiKeys/api-keys', {
        name: 'admin key',
        permissions: ['posts:write'],
      });
      expect(adminKey.status).toBe(201);

      // The permissions offered are the caller's own, not the widgets' scopes.
      const offered = await self.http.get('/_widgets/UserApiKeys/permissions?limit=100');
      expect(offered.status).toBe(200);
      expect(offered.body.data.map((p: { slug: string }) => p.slug)).toEqual(['posts:read']);

      const created = await self.http.post('/_widgets/UserApiKeys/api-keys', {
        name: 'mine',
        permissions: ['posts:read'],
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'mine', permissions: ['posts:read'], expiresAt: null });
      const beyond = await self.http.post('/_widgets/UserApiKeys/api-keys', {
        name: 'more',
        permissions: ['posts:write'],
      });
      expect(beyond.status).toBe(422);
      expect(beyond.body.errors[0]).toMatchObject({ field: 'permissions', code: 'permission_not_held' });

      const mine = await self.http.get('/_widgets/UserApiKeys/api-keys');
      expect(mine.status).toBe(200);
      expect(mine.body.data).toEqual([
        {
          id: created.body.id,
          name: 'mine',
          obfuscatedValue: created.body.obfuscatedValue,
          createdAt: created.body.createdAt,
          lastUsedAt: null,
          expiresAt: null,
          permissions: ['posts:read'],
          owner: {
            type: 'user',
            id: self.userId,
            email: self.email,
            firstName: 'Ada',
            lastName: 'Lovelace',
            displayName: 'Ada Lovelace',
          },
        },
      ]);
      // The REST view: a user key of this member.
      const rest = await env.http.post('/api_keys/validations', { value: created.body.value });
      expect(rest.body.api_key.owner).toEqual({ type: 'user', id: self.userId, organization_id: admin.organizationId });

      // Another member's key is not theirs: 404, untouched.
      expect((await self.http.post(`/_widgets/UserApiKeys/${adminKey.body.id}/expire`, {})).status).toBe(404);
      expect((await self.http.delete(`/_widgets/UserApiKeys/${adminKey.body.id}`)).status).toBe(404);
      // Their own.
      const expired = await self.http.post(`/_widgets/UserApiKeys/${created.body.id}/expire`, {});
      expect(expired.status).toBe(200);
      expect(expired.body.owner.id).toBe(self.userId);
      expect((await env.http.post('/api_keys/validations', { value: created.body.value })).body).toEqual({
        api_key: null,
      });
      expect((await self.http.delete(`/_widgets/UserApiKeys/${created.body.id}`)).body).toEqual({ success: true });
      expect((await storedKeys(env)).map((k) => k.id)).toEqual([adminKey.body.id]);
    },
  );

  it(
    "manage-all: lists and revokes every member's keys, searches by name or e-mail, creates only its own",
    LONG,
    async () => {
      const env = await newEnvironment();
      const admin = await member(env, 'keys-admin');
      const self = await member(env, 'keys-self', admin.organizationId);
      const theirs = await self.http.post('/_widgets/UserApiKeys/api-keys', { name: 'theirs', permissions: [] });
      const own = await admin.http.post('/_widgets/UserApiKeys/api-keys', { name: 'own', permissions: [] });
      // An organization key is not a user key: never listed here, and 404 to the user routes.
      const orgKey = await admin.http.post('/_widgets/ApiKeys/organization-api-keys', { name: 'org', permissions: [] });

      const all = await admin.http.get('/_widgets/UserApiKeys/api-keys');
      expect(all.body.data.map((k: { id: string }) => k.id)).toEqual([theirs.body.id, own.body.id]);
      const byEmail = await admin.http.get(`/_widgets/UserApiKeys/api-keys?search=${encodeURIComponent(self.email)}`);
      expect(byEmail.body.data.map((k: { id: string }) => k.id)).toEqual([theirs.body.id]);
      expect((await admin.http.delete(`/_widgets/UserApiKeys/${orgKey.body.id}`)).status).toBe(404);
      expect(own.body).toMatchObject({ name: 'own' });
      const [ownRow] = (await storedKeys(env)).filter((k) => k.id === own.body.id);
      expect(ownRow?.userId).toBe(admin.userId);

      expect((await admin.http.delete(`/_widgets/UserApiKeys/${theirs.body.id}`)).status).toBe(200);
      expect((await env.http.post('/api_keys/validations', { value: theirs.body.value })).body).toEqual({
        api_key: null,
      });
    },
  );

  it('a member with neither scope is 403; another organization sees none of them', async () => {
    const env = await newEnvironment();
    const self = await member(env, 'keys-self');
    const none = await member(env, 'keys-none', self.organizationId);
    const stranger = await member(env, 'keys-admin');
    const key = await self.http.post('/_widgets/UserApiKeys/api-keys', { name: 'k', permissions: [] });
    const before = await snapshot(env);
    for (const res of [
      await none.http.get('/_widgets/UserApiKeys/api-keys'),
      await none.http.get('/_widgets/UserApiKeys/permissions'),
      await none.http.post('/_widgets/UserApiKeys/api-keys', { name: 'k', permissions: [] }),
      await none.http.post(`/_widgets/UserApiKeys/${key.body.id}/expire`, {}),
      await none.http.delete(`/_widgets/UserApiKeys/${key.body.id}`),
    ]) {
      expect(res.status).toBe(403);
    }
    expect((await stranger.http.get('/_widgets/UserApiKeys/api-keys')).body.data).toEqual([]);
    expect((await stranger.http.delete(`/_widgets/UserApiKeys/${key.body.id}`)).status).toBe(404);
    expect(await snapshot(env)).toEqual(before);
  });
});
