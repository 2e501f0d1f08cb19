import { membershipRoles, organizationMemberships, roles } from '@atrium/db';
import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const MEMBERSHIPS = '/user_management/organization_memberships';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

async function orgAndUser(env: TestEnvironment) {
  const org = (await env.http.post('/organizations', { name: 'Acme' })).body;
  const user = (await env.http.post('/user_management/users', { email: uniqueEmail('r') })).body;
  return { orgId: org.id as string, userId: user.id as string };
}

async function membershipCount(env: TestEnvironment) {
  const rows = await env.deps.db
    .select({ id: organizationMemberships.id })
    .from(organizationMemberships)
    .where(eq(organizationMemberships.environmentId, env.environmentId));
  const links = await env.deps.db
    .select({ id: membershipRoles.roleId })
    .from(membershipRoles)
    .where(eq(membershipRoles.environmentId, env.environmentId));
  return { memberships: rows.length, links: links.length };
}

describe('membership roles over HTTP', () => {
  describe.each([
    ['an unknown role_slug', { role_slug: 'no-such-role' }, 'role_slug'],
    ['an unknown slug among role_slugs', { role_slugs: ['admin', 'nope'] }, 'role_slugs'],
    ['role_slug and role_slugs together', { role_slug: 'admin', role_slugs: ['admin'] }, 'role_slugs'],
    ['an empty role_slugs', { role_slugs: [] }, 'role_slugs'],
  ])('create with %s', (_label, extra, field) => {
    it('is 422 with the field named, and stores nothing', async () => {
      const env = await newEnvironment();
      const { orgId, userId } = await orgAndUser(env);
      const before = await membershipCount(env);
      const events = (await storedEvents(env)).length;
      const res = await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId, ...extra });
      expect(res.status, res.text).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await membershipCount(env)).toEqual(before);
      expect((await storedEvents(env)).length).toBe(events);
    });
  });

  it('an unknown slug names the role in errors[] with code role_not_found', async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    const res = await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId, role_slug: 'ghost' });
    expect(res.body.errors).toEqual([
      { field: 'role_slug', code: 'role_not_found', message: "Role 'ghost' does not exist for this organization." },
    ]);
  });

  it("another organization's role is unknown here (422), and so is another environment's", async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    const other = (await env.http.post('/organizations', { name: 'Other' })).body.id;
    await env.http.post(`/authorization/organizations/${other}/roles`, { slug: 'org-other', name: 'Other' });
    const foreign = await newEnvironment();
    await foreign.http.post('/authorization/roles', { slug: 'foreign', name: 'Foreign' });
    for (const slug of ['org-other', 'foreign']) {
      const res = await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId, role_slug: slug });
      expect(res.status, slug).toBe(422);
    }
    expect((await membershipCount(env)).memberships).toBe(0);
  });

  it('PUT changes the roles (200, event with role), unknown slugs are 422 and change nothing, no slug is a no-op', async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    const created = (await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId })).body;
    expect(created.role).toEqual({ slug: 'member' });

    const changed = await env.http.put(`${MEMBERSHIPS}/${created.id}`, { role_slug: 'admin' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ id: created.id, role: { slug: 'admin' }, roles: [{ slug: 'admin' }] });
    const updated = (await storedEvents(env)).filter((e) => e.event === 'organization_membership.updated');
    expect(updated).toHaveLength(1);
    // The event is the answer without the embedded user (upstream's membership events carry none).
    const { user, ...payload } = changed.body;
    expect(user).toMatchObject({ object: 'user', id: userId });
    expect(updated[0]?.data).toEqual(payload);

    const events = (await storedEvents(env)).length;
    const bad = await env.http.put(`${MEMBERSHIPS}/${created.id}`, { role_slugs: ['admin', 'ghost'] });
    expect(bad.status).toBe(422);
    expect((await env.http.get(`${MEMBERSHIPS}/${created.id}`)).body.roles).toEqual([{ slug: 'admin' }]);
    const same = await env.http.put(`${MEMBERSHIPS}/${created.id}`, {});
    expect(same.body).toEqual(changed.body);
    const unchanged = await env.http.put(`${MEMBERSHIPS}/${created.id}`, { role_slug: 'admin' });
    expect(unchanged.body).toEqual(changed.body);
    expect((await storedEvents(env)).length).toBe(events);
    expect((await env.http.put(`${MEMBERSHIPS}/om_01UNKNOWN`, { role_slug: 'admin' })).status).toBe(404);
  });

  it('concurrent role changes of one membership leave the last write, and no 5xx', async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    await env.http.post(`/authorization/organizations/${orgId}/roles`, { slug: 'org-ops', name: 'Ops' });
    const created = (await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId })).body;
    const choices = [['admin'], ['member'], ['org-ops'], ['org-ops', 'admin'], ['member', 'org-ops']];
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        env.http.put(`${MEMBERSHIPS}/${created.id}`, { role_slugs: choices[i % choices.length] }),
      ),
    );
    expect(responses.filter((r) => r.status >= 500)).toEqual([]);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    // The stored roles are those of the last change to commit: the last event's.
    const last = (await storedEvents(env)).filter((e) => e.event === 'organization_membership.updated').at(-1);
    const now = (await env.http.get(`${MEMBERSHIPS}/${created.id}`)).body;
    expect(last).toBeDefined();
    expect(now.roles).toEqual((last?.data as { roles?: unknown } | undefined)?.roles);
    const links = await env.deps.db
      .select()
      .from(membershipRoles)
      .where(eq(membershipRoles.organizationMembershipId, created.id));
    expect(links).toHaveLength(now.roles.length);
  });
});

describe('roles over HTTP', () => {
  it('refuses bad slugs (422), a taken slug (409) and an unknown role (404), storing nothing', async () => {
    const env = await newEnvironment();
    const count = async () =>
      (await env.deps.db.select().from(roles).where(eq(roles.environmentId, env.environmentId))).length;
    const start = await count();
    for (const slug of ['Bad Slug', '-x', 'a'.repeat(65), '', 'UPPER']) {
      const res = await env.http.post('/authorization/roles', { slug, name: 'X' });
      expect(res.status, slug).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
    }
    expect((await env.http.post('/authorization/roles', { slug: 'ok', name: '' })).status).toBe(422);
    const taken = await env.http.post('/authorization/roles', { slug: 'admin', name: 'Again' });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('role_slug_conflict');
    expect(await count()).toBe(start);
    expect((await env.http.get('/authorization/roles/ghost')).body.code).toBe('entity_not_found');
    const org = (await env.http.post('/organizations', { name: 'A' })).body.id;
    await env.http.post(`/authorization/organizations/${org}/roles`, { slug: 'org-x', name: 'X' });
    const again = await env.http.post(`/authorization/organizations/${org}/roles`, { slug: 'org-x', name: 'X' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('organization_role_slug_conflict');
    const unknownPermission = await env.http.put('/authorization/roles/admin/permissions', { permissions: ['ghost'] });
    expect(unknownPermission.status).toBe(422);
    expect(unknownPermission.body.errors[0]).toMatchObject({ field: 'permissions', code: 'permission_not_found' });
    // Unchanged: the system permissions every environment's admin starts with.
    expect((await env.http.get('/authorization/roles/admin')).body.permissions).toEqual([
      'widgets:api-keys:manage',
      'widgets:audit-log-streaming:manage',
      'widgets:domain-verification:manage',
      'widgets:dsync:manage',
      'widgets:sso:manage',
      'widgets:user-api-keys:manage-all',
      'widgets:user-api-keys:manage-self',
      'widgets:users-table:manage',
    ]);
  });

  it('deleting a role in use is 409 role_has_assignments; once unused it goes (204); the default role cannot go', async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    const orgRoles = `/authorization/organizations/${orgId}/roles`;
    await env.http.post(orgRoles, { slug: 'org-lead', name: 'Lead' });
    await env.http.post('/authorization/roles', { slug: 'viewer', name: 'Viewer' });
    const m = (
      await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId, role_slugs: ['org-lead', 'viewer'] })
    ).body;

    for (const path of [`${orgRoles}/org-lead`, '/authorization/roles/viewer']) {
      const refused = await env.http.delete(path);
      expect(refused.status, path).toBe(409);
      expect(refused.body.code).toBe('role_has_assignments');
    }
    expect((await env.http.get(`${orgRoles}/org-lead`)).status).toBe(200);
    expect((await env.http.get(`${MEMBERSHIPS}/${m.id}`)).body.roles).toEqual([
      { slug: 'org-lead' },
      { slug: 'viewer' },
    ]);

    await env.http.put(`${MEMBERSHIPS}/${m.id}`, { role_slug: 'member' });
    expect((await env.http.delete(`${orgRoles}/org-lead`)).status).toBe(204);
    expect((await env.http.delete('/authorization/roles/viewer')).status).toBe(204);
    expect((await env.http.get(`${orgRoles}/org-lead`)).status).toBe(404);

    const defaultRole = await env.http.delete('/authorization/roles/member');
    expect(defaultRole.status).toBe(409);
    expect(defaultRole.body.code).toBe('default_role');
    const names = (await storedEvents(env)).map((e) => e.event);
    expect(names.filter((n) => n === 'organization_role.deleted')).toHaveLength(1);
    expect(names.filter((n) => n === 'role.deleted')).toHaveLength(1);
  });

  it('a role deleted while a membership is being given it: one wins, never a 5xx', async () => {
    const env = await newEnvironment();
    const { orgId } = await orgAndUser(env);
    await env.http.post('/authorization/roles', { slug: 'temp', name: 'Temp' });
    const users = await Promise.all(
      Array.from({ length: 6 }, () => env.http.post('/user_management/users', { email: uniqueEmail('race') })),
    );
    const results = await Promise.all([
      ...users.map((u) =>
        env.http.post(MEMBERSHIPS, { user_id: u.body.id, organization_id: orgId, role_slug: 'temp' }),
      ),
      env.http.delete('/authorization/roles/temp'),
    ]);
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    const deleted = results.at(-1)?.status === 204;
    const holders = await env.deps.db
      .select()
      .from(membershipRoles)
      .innerJoin(roles, eq(roles.id, membershipRoles.roleId))
      .where(and(eq(roles.environmentId, env.environmentId), eq(roles.slug, 'temp')));
    if (deleted) {
      expect(holders).toHaveLength(0);
      for (const r of results.slice(0, -1)) expect([201, 422]).toContain(r.status);
    } else {
      expect(results.at(-1)?.status).toBe(409);
      expect(holders.length).toBeGreaterThan(0);
    }
  });

  it('the default role: starts as member, can be changed, and new memberships get it', async () => {
    const env = await newEnvironment();
    expect((await env.http.get('/authorization/default_role')).body).toMatchObject({ slug: 'member' });
    const set = await env.http.put('/authorization/default_role', { slug: 'admin' });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ slug: 'admin', type: 'EnvironmentRole' });
    expect((await env.http.get('/authorization/default_role')).body.slug).toBe('admin');
    expect((await env.http.put('/authorization/default_role', { slug: 'ghost' })).status).toBe(404);
    const { orgId, userId } = await orgAndUser(env);
    const m = (await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId })).body;
    expect(m.role).toEqual({ slug: 'admin' });
    // member is an ordinary role now, and may be deleted while unused.
    expect((await env.http.delete('/authorization/roles/member')).status).toBe(204);
    expect((await env.http.get('/authorization/roles')).body.data.map((r: { slug: string }) => r.slug)).toEqual([
      'admin',
    ]);
  });
});

describe('events with the shapes of the SDK', () => {
  it('role.*, organization_role.*, permission.*, membership events with role, group member events by id', async () => {
    const env = await newEnvironment();
    const { orgId, userId } = await orgAndUser(env);
    await env.http.post('/authorization/permissions', { slug: 'docs:read', name: 'Read docs' });
    await env.http.post('/authorization/roles', { slug: 'reader', name: 'Reader' });
    await env.http.put('/authorization/roles/reader/permissions', { permissions: ['docs:read'] });
    await env.http.post(`/authorization/organizations/${orgId}/roles`, { slug: 'org-a', name: 'A', description: 'd' });
    await env.http.patch('/authorization/permissions/docs:read', { name: 'Read' });
    const m = (await env.http.post(MEMBERSHIPS, { user_id: userId, organization_id: orgId, role_slug: 'reader' })).body;
    const group = (await env.http.post(`/organizations/${orgId}/groups`, { name: 'G' })).body;
    await env.http.post(`/organizations/${orgId}/groups/${group.id}/organization-memberships`, {
      organization_membership_id: m.id,
    });
    await env.http.delete(`/organizations/${orgId}/groups/${group.id}/organization-memberships/${m.id}`);
    await env.http.delete(`/authorization/organizations/${orgId}/roles/org-a`);
    await env.http.delete(`${MEMBERSHIPS}/${m.id}`);
    await env.http.delete('/authorization/permissions/docs:read');

    const stored = await storedEvents(env);
    const data = (name: string) => stored.filter((e) => e.event === name).map((e) => e.data);
    const ts = expect.stringMatching(/Z$/);
    expect(data('role.created')).toEqual([
      {
        object: 'role',
        slug: 'reader',
        resource_type_slug: 'organization',
        permissions: [],
        created_at: ts,
        updated_at: ts,
      },
    ]);
    // Granted, then lost with the permission's deletion.
    expect(data('role.updated')).toEqual([
      expect.objectContaining({ slug: 'reader', permissions: ['docs:read'] }),
      expect.objectContaining({ slug: 'reader', permissions: [] }),
    ]);
    const orgRole = {
      object: 'organization_role',
      organization_id: orgId,
      slug: 'org-a',
      name: 'A',
      description: 'd',
      resource_type_slug: 'organization',
      permissions: [],
      created_at: ts,
      updated_at: ts,
    };
    expect(data('organization_role.created')).toEqual([orgRole]);
    expect(data('organization_role.deleted')).toEqual([orgRole]);
    expect(data('permission.created')).toEqual([
      expect.objectContaining({ object: 'permission', slug: 'docs:read', name: 'Read docs', system: false }),
    ]);
    expect(data('permission.updated')).toEqual([expect.objectContaining({ slug: 'docs:read', name: 'Read' })]);
    expect(data('permission.deleted')).toHaveLength(1);
    const { user, ...payload } = m;
    expect(user).toMatchObject({ object: 'user', id: userId });
    expect(data('organization_membership.created')).toEqual([payload]);
    expect(data('organization_membership.deleted')).toEqual([
      expect.objectContaining({ id: m.id, role: { slug: 'reader' } }),
    ]);
    const member = { group_id: group.id, organization_membership_id: m.id };
    expect(data('group.member_added')).toEqual([member]);
    expect(data('group.member_removed')).toEqual([member]);
    // The organization's events are found by its filter.
    const byOrg = (await env.http.get(`/events?organization_id=${orgId}&limit=100`)).body.data.map(
      (e: { event: string }) => e.event,
    );
    expect(byOrg).toContain('organization_role.created');
  });
});

describe('the typed tRPC client', () => {
  it('sees roles, permissions and membership roles over /trpc', async () => {
    const env = await newEnvironment();
    const trpc = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${env.world.url}/trpc`, headers: () => ({ Authorization: `Bearer ${env.apiKey}` }) })],
    });
    const org = await trpc.organizations.create.mutate({ name: 'Acme' });
    await trpc.permissions.create.mutate({ slug: 'x:read', name: 'X' });
    const role = await trpc.roles.organization.create.mutate({ organization_id: org.id, name: 'Ops Team' });
    expect(role.slug).toBe('org-ops-team');
    const granted = await trpc.roles.organization.addPermission.mutate({
      organization_id: org.id,
      role_slug: role.slug,
      slug: 'x:read',
    });
    expect(granted.permissions).toEqual(['x:read']);
    const user = await trpc.users.create.mutate({ email: uniqueEmail('t') });
    const om = await trpc.organizationMemberships.create.mutate({
      user_id: user.id,
      organization_id: org.id,
      role_slug: role.slug,
    });
    expect(om.role).toEqual({ slug: 'org-ops-team' });
    const changed = await trpc.organizationMemberships.update.mutate({ id: om.id, role_slugs: ['admin', role.slug] });
    expect(changed.roles).toEqual([{ slug: 'admin' }, { slug: 'org-ops-team' }]);
    expect((await trpc.roles.list.query({})).data.map((r) => r.slug)).toEqual(['member', 'admin']);
    const error = await trpc.roles.get.query({ slug: 'ghost' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({ httpStatus: 404 });
  });
});
