import { invitations } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_ROLE } from '../helpers/client.ts';
import { storedEventData, storedEvents } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { statementsOf } from '../helpers/statements.ts';
import { newEnvironment } from '../helpers/world.ts';
import { addMember, invitationsOf, membershipsOf } from './members-helpers.ts';

const BASE = '/_widgets/UserManagement';

describe('UsersManagement REST (/_widgets/UserManagement)', () => {
  it('lists members and invitations with status, roles, server-decided actions and isLoggedInUser', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { roleSlug: 'admin' });
    const b = await addMember(env, a.organizationId, { firstName: 'Grace' });
    const managed = await addMember(env, a.organizationId, { directoryManaged: true });
    const invited = uniqueEmail('invitee');
    expect((await a.http.post(`${BASE}/invite-user`, { email: invited, roles: ['admin'] })).body).toEqual({
      success: true,
    });

    const res = await a.http.get(`${BASE}/members?limit=10`);
    expect(res.status).toBe(200);
    expect(res.body.list_metadata).toEqual({ before: null, after: null });
    const rows = res.body.data;
    expect(rows.map((r: { email: string }) => r.email)).toEqual([a.email, b.email, managed.email, invited]);
    expect(rows[0]).toMatchObject({
      id: a.userId,
      status: 'Active',
      isLoggedInUser: true,
      actions: [],
      roles: [{ name: 'Admin', slug: 'admin', description: null }],
      firstName: 'Ada',
      lastName: 'Lovelace',
      emailVerified: false,
      // The last sign-in: a widget token is none (issue #34), and no client token was issued.
      lastActivityAt: null,
    });
    expect(rows[1]).toMatchObject({
      id: b.userId,
      status: 'Active',
      isLoggedInUser: null,
      actions: ['edit-role', 'revoke-membership'],
      roles: [{ name: 'Member', slug: 'member' }],
    });
    expect(rows[2]).toMatchObject({ id: managed.userId, actions: [] });
    // Each member's createdAt is its membership's, in the wire's form (millisecond precision, `Z`).
    const memberships = await membershipsOf(env, a.organizationId);
    for (const row of rows.slice(0, 3)) {
      const membership = memberships.find((m) => m.userId === row.id);
      expect(row.createdAt).toBe(membership?.createdAt.toISOString());
    }
    const stored = await invitationsOf(env, a.organizationId);
    expect(rows[3]).toMatchObject({
      id: stored[0]?.id,
      status: 'Invited',
      actions: ['resend-invite', 'revoke-invite'],
      roles: [{ slug: 'admin' }],
      createdAt: stored[0]?.createdAt.toISOString(),
    });

    // Role filter (an unknown slug matches nothing) and search (empty is none).
    const admins = await a.http.get(`${BASE}/members?role=admin`);
    expect(admins.body.data.map((r: { email: string }) => r.email)).toEqual([a.email, invited]);
    expect((await a.http.get(`${BASE}/members?role=nope`)).body.data).toEqual([]);
    const found = await a.http.get(`${BASE}/members?search=${encodeURIComponent(b.email.toUpperCase())}`);
    expect(found.body.data.map((r: { id: string }) => r.id)).toEqual([b.userId]);
    expect((await a.http.get(`${BASE}/members?search=`)).body.data).toHaveLength(4);
    expect((await a.http.get(`${BASE}/members?search=grace`)).body.data.length).toBeGreaterThanOrEqual(2);
  });

  it('pages with the widget wiring: Next sends list_metadata.before as `before`, Previous sends `after`', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    for (let i = 0; i < 4; i++) await addMember(env, a.organizationId);
    await a.http.post(`${BASE}/invite-user`, { email: uniqueEmail('inv'), roles: [] });
    const first = await a.http.get(`${BASE}/members?limit=2`);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.list_metadata.after).toBeNull();
    expect(first.body.list_metadata.before).toEqual(expect.any(String));
    const second = await a.http.get(`${BASE}/members?limit=2&before=${first.body.list_metadata.before}`);
    const third = await a.http.get(`${BASE}/members?limit=2&before=${second.body.list_metadata.before}`);
    expect(third.body.data).toHaveLength(2);
    expect(third.body.list_metadata.before).toBeNull();
    expect(third.body.data[1].status).toBe('Invited');
    const all = [...first.body.data, ...second.body.data, ...third.body.data].map((r: { id: string }) => r.id);
    expect(new Set(all).size).toBe(6);
    // Previous from the third page is the second page again.
    const back = await a.http.get(`${BASE}/members?limit=2&after=${third.body.list_metadata.after}`);
    expect(back.body.data.map((r: { id: string }) => r.id)).toEqual(second.body.data.map((r: { id: string }) => r.id));
    const start = await a.http.get(`${BASE}/members?limit=2&after=${back.body.list_metadata.after}`);
    expect(start.body.data).toEqual(first.body.data);
    expect(start.body.list_metadata.after).toBeNull();
  });

  // Issue #35: a page the members fill is the token's held-permissions read and one statement
  // (the rows, their role slugs and the roles that name them), as the bench's floor reads it.
  it('reads a page the members fill in two statements: the held permissions and the page', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    for (let i = 0; i < 3; i++) await addMember(env, a.organizationId);
    await a.http.post(`${BASE}/invite-user`, { email: uniqueEmail('inv'), roles: [] });
    await a.http.get(`${BASE}/members?limit=2`);
    const read = await statementsOf(env.deps.db, () => a.http.get(`${BASE}/members?limit=2`));
    expect(read.result.status).toBe(200);
    expect(read.result.body.data).toHaveLength(2);
    expect(read.result.body.data[0]).toMatchObject({ id: a.userId, roles: [{ slug: WIDGET_ROLE }] });
    expect(read.result.body.list_metadata).toEqual({ before: expect.any(String), after: null });
    expect(read.statements).toHaveLength(2);
    expect(read.statements.filter((text) => text.includes('page_roles'))).toHaveLength(1);
  });

  it('roles-and-config and roles list the organization roles, the default marked', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { roleSlug: 'admin' });
    const config = await a.http.get(`${BASE}/roles-and-config`);
    expect(config.status).toBe(200);
    expect(config.body).toEqual({
      roles: [
        { name: 'Member', slug: 'member', default: true, description: null },
        { name: 'Admin', slug: 'admin', default: false, description: null },
      ],
      multipleRolesEnabled: true,
    });
    const roles = await a.http.get(`${BASE}/roles`);
    expect(roles.body).toEqual(config.body.roles);
  });

  it('invite refusals carry the messages the invite dialog matches, and store nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await addMember(env, a.organizationId);
    const invited = uniqueEmail('inv');
    await a.http.post(`${BASE}/invite-user`, { email: invited, roles: ['member'] });
    const before = (await invitationsOf(env, a.organizationId)).length;
    const cases: [unknown, number, string][] = [
      [{ email: b.email, roles: ['member'] }, 400, 'User already exists'],
      [{ email: invited, roles: ['member'] }, 400, 'User already invited'],
      [{ email: 'not-an-email', roles: ['member'] }, 400, 'Invalid email'],
      [{ email: uniqueEmail('x'), roles: ['_rolePlaceholder'] }, 400, 'Invalid role'],
    ];
    for (const [body, status, message] of cases) {
      const res = await a.http.post(`${BASE}/invite-user`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.message).toBe(message);
    }
    for (const bad of [{}, { email: 5 }, { email: 'x@y.z', roles: 'admin' }]) {
      const res = await a.http.post(`${BASE}/invite-user`, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.message).toEqual(expect.any(String));
    }
    expect(await invitationsOf(env, a.organizationId)).toHaveLength(before);
  });

  it('changes roles (stored, evented), removes members (stored, evented), revokes and resends invitations', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { roleSlug: 'admin' });
    const b = await addMember(env, a.organizationId);
    const c = await addMember(env, a.organizationId);
    const mark = (await storedEvents(env)).length;

    const updated = await a.http.post(`${BASE}/members/${b.userId}`, { roles: ['admin', 'member'] });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ id: b.userId, success: true });
    const row = (await a.http.get(`${BASE}/members?role=admin`)).body.data.find(
      (m: { id: string }) => m.id === b.userId,
    );
    expect(row.roles.map((r: { slug: string }) => r.slug)).toEqual(['admin', 'member']);

    const removed = await a.http.delete(`${BASE}/members/${c.userId}`);
    expect(removed.body).toEqual({ id: c.userId, success: true });
    expect((await membershipsOf(env, a.organizationId)).map((m) => m.userId)).not.toContain(c.userId);

    const names = (await storedEvents(env)).slice(mark).map((e) => e.event);
    expect(names).toEqual(['organization_membership.updated', 'organization_membership.deleted']);

    await a.http.post(`${BASE}/invite-user`, { email: uniqueEmail('inv'), roles: ['member'] });
    const [invitation] = await invitationsOf(env, a.organizationId);
    const id = invitation?.id as string;
    const resent = await a.http.post(`${BASE}/invites/${id}/resend`);
    expect(resent.body).toEqual({ id, success: true });
    expect(await storedEventData(env, 'invitation.resent')).toHaveLength(1);
    const revoked = await a.http.delete(`${BASE}/invites/${id}`);
    expect(revoked.body).toEqual({ id, success: true });
    const listed = (await a.http.get(`${BASE}/members`)).body.data.find((m: { id: string }) => m.id === id);
    expect(listed).toMatchObject({ status: 'InviteRevoked', actions: ['resend-invite'] });
    expect((await a.http.delete(`${BASE}/invites/${id}`)).status).toBe(400);
    // Resending a revoked invitation sends a new one.
    const again = await a.http.post(`${BASE}/invites/${id}/resend`);
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(id);
    const latest = (await a.http.get(`${BASE}/members`)).body.data.find((m: { id: string }) => m.id === again.body.id);
    expect(latest).toMatchObject({ status: 'Invited' });
  });

  it('refuses to remove or demote the last admin, to touch a directory-managed member, and to remove yourself', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const admin = await addMember(env, a.organizationId, { roleSlug: 'admin' });
    const managed = await addMember(env, a.organizationId, { directoryManaged: true });
    const mark = (await storedEvents(env)).length;

    const demote = await a.http.post(`${BASE}/members/${admin.userId}`, { roles: ['member'] });
    expect(demote.status).toBe(409);
    expect(demote.body.message).toMatch(/last admin/);
    const remove = await a.http.delete(`${BASE}/members/${admin.userId}`);
    expect(remove.status).toBe(409);
    expect(remove.body.message).toMatch(/last admin/);
    expect((await a.http.post(`${BASE}/members/${managed.userId}`, { roles: ['admin'] })).status).toBe(409);
    expect((await a.http.delete(`${BASE}/members/${managed.userId}`)).status).toBe(409);
    const self = await a.http.delete(`${BASE}/members/${a.userId}`);
    expect(self.status).toBe(409);
    expect(self.body.message).toMatch(/yourself/);
    expect(await membershipsOf(env, a.organizationId)).toHaveLength(3);
    expect((await storedEvents(env)).length).toBe(mark);

    // With a second admin, the first may be demoted.
    await addMember(env, a.organizationId, { roleSlug: 'admin' });
    expect((await a.http.post(`${BASE}/members/${admin.userId}`, { roles: ['member'] })).status).toBe(200);
  });

  it('shows a lapsed invitation as InviteExpired; resending it sends a new one', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const email = uniqueEmail('late');
    await a.http.post(`${BASE}/invite-user`, { email, roles: ['member'] });
    const [invitation] = await invitationsOf(env, a.organizationId);
    const id = invitation?.id as string;
    await env.deps.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.id, id));
    const row = (await a.http.get(`${BASE}/members`)).body.data.find((m: { id: string }) => m.id === id);
    expect(row).toMatchObject({ status: 'InviteExpired', actions: ['resend-invite'] });
    expect((await a.http.delete(`${BASE}/invites/${id}`)).status).toBe(400);
    const resent = await a.http.post(`${BASE}/invites/${id}/resend`);
    expect(resent.status).toBe(200);
    const rows = (await a.http.get(`${BASE}/members`)).body.data.filter((m: { email: string }) => m.email === email);
    expect(rows).toEqual([expect.objectContaining({ id: resent.body.id, status: 'Invited' })]);
    const states = (await invitationsOf(env, a.organizationId)).map((i) => i.state).sort();
    expect(states).toEqual(['expired', 'pending']);
  });

  it('lets only one of two concurrent demotions of the last two admins through', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await addMember(env, a.organizationId, { roleSlug: 'admin' });
    const c = await addMember(env, a.organizationId, { roleSlug: 'admin' });
    const results = await Promise.all(
      [b, c].map((m) => a.http.post(`${BASE}/members/${m.userId}`, { roles: ['member'] })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const admins = await a.http.get(`${BASE}/members?role=admin`);
    expect(admins.body.data).toHaveLength(1);
  });

  it('answers 403 without the scope, 404 for another organization, 4xx for bad bodies and stores nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const other = await clientSetup(env);
    const noScope = await clientSetup(env, { scopes: ['widgets:sso:manage'], organizationId: a.organizationId });
    for (const [method, path] of [
      ['GET', 'members'],
      ['GET', 'roles-and-config'],
      ['GET', 'roles'],
      ['POST', 'invite-user'],
      ['POST', `members/${a.userId}`],
      ['DELETE', `members/${a.userId}`],
      ['DELETE', 'invites/invitation_x'],
      ['POST', 'invites/invitation_x/resend'],
    ] as const) {
      const body = method === 'POST' ? { email: uniqueEmail('x'), roles: ['member'] } : undefined;
      const res = await noScope.http.request(method, `${BASE}/${path}`, { body });
      expect(res.status, path).toBe(403);
    }
    await other.http.post(`${BASE}/invite-user`, { email: uniqueEmail('inv'), roles: [] });
    const [foreign] = await invitationsOf(env, other.organizationId);
    expect((await a.http.post(`${BASE}/members/${other.userId}`, { roles: ['admin'] })).status).toBe(404);
    expect((await a.http.delete(`${BASE}/members/${other.userId}`)).status).toBe(404);
    expect((await a.http.delete(`${BASE}/invites/${foreign?.id}`)).status).toBe(404);
    expect((await a.http.post(`${BASE}/invites/${foreign?.id}/resend`)).status).toBe(404);
    expect((await invitationsOf(env, other.organizationId))[0]?.state).toBe('pending');
    expect(await membershipsOf(env, other.organizationId)).toHaveLength(1);

    const b = await addMember(env, a.organizationId);
    for (const bad of [{}, { roles: 'admin' }, { roles: [] }, { roles: ['nope'] }]) {
      const res = await a.http.post(`${BASE}/members/${b.userId}`, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.message).toEqual(expect.any(String));
    }
    const stored = (await membershipsOf(env, a.organizationId)).find((m) => m.userId === b.userId);
    expect(stored?.updatedAt.getTime()).toBe(stored?.createdAt.getTime());
  });
});
