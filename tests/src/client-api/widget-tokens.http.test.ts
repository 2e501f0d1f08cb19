import { sessions } from '@atrium/db';
import { TRPCClientError } from '@trpc/client';
import { count, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, clientFor, clientSetup, trpcFor } from '../helpers/client.ts';
import { storedEvents } from '../helpers/events.ts';
import { statementsOf } from '../helpers/statements.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { addMember } from './members-helpers.ts';
import { anotherToken } from './self-helpers.ts';

// Issue #34 items 1 and 11: a widget token carries only the scopes the user's roles grant, checked
// again on every use, and it is not a session (nothing stored, no one signed in).

const BASE = '/_widgets/UserManagement';
const UPDATE_ROLE = `mutation U($input: UpdateMemberRoleInput!) { updateMemberRole(input: $input) { __typename } }`;

async function widgetToken(env: TestEnvironment, body: Record<string, unknown>) {
  return env.http.post('/widgets/token', body);
}

/** The stored sessions and events of the environment: what issuing or refusing a token may not add to. */
async function stored(env: TestEnvironment) {
  const [row] = await env.deps.db
    .select({ n: count() })
    .from(sessions)
    .where(eq(sessions.environmentId, env.environmentId));
  return { sessions: row?.n ?? 0, events: (await storedEvents(env)).length };
}

async function rolesOf(env: TestEnvironment, membershipId: string): Promise<string[]> {
  const res = await env.http.get(`/user_management/organization_memberships/${membershipId}`);
  return (res.body.roles as Array<{ slug: string }>).map((r) => r.slug);
}

/** An organization with an admin (so the last-admin rule never decides) and a plain member. */
async function organizationWithMember(env: TestEnvironment) {
  const org = await env.http.post('/organizations', { name: 'Widget Corp' });
  await addMember(env, org.body.id, { roleSlug: 'admin' });
  const member = await addMember(env, org.body.id);
  return { organizationId: org.body.id as string, member };
}

/** An organization's admin and the widget token they asked for (by default, the members table's). */
async function adminWithToken(scopes = ['widgets:users-table:manage']) {
  const env = await newEnvironment();
  const { organizationId } = await organizationWithMember(env);
  const admin = await addMember(env, organizationId, { roleSlug: 'admin' });
  const issued = await widgetToken(env, { organization_id: organizationId, user_id: admin.userId, scopes });
  return { env, organizationId, admin, issued };
}

describe('widget token scopes (item 1)', () => {
  it("a member asking for the users table's manage scope gets a token without it, and cannot make themself admin", async () => {
    const env = await newEnvironment();
    const { organizationId, member } = await organizationWithMember(env);
    const issued = await widgetToken(env, {
      organization_id: organizationId,
      user_id: member.userId,
      scopes: ALL_WIDGET_SCOPES,
    });
    expect(issued.status).toBe(201);
    expect(decodeJwt(issued.body.token).permissions).toEqual([]);
    const { http, graphql } = clientFor(env, issued.body.token);

    const rest = await http.post(`${BASE}/members/${member.userId}`, { roles: ['admin'] });
    expect(rest.status).toBe(403);
    expect(rest.body).toMatchObject({ code: 'forbidden' });
    const gql = await graphql(UPDATE_ROLE, { input: { userId: member.userId, roleSlugs: ['admin'] } });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const trpc = await trpcFor(env, issued.body.token)
      .client.members.updateRole.mutate({ userId: member.userId, roleSlugs: ['admin'] })
      .catch((e: unknown) => e);
    expect(trpc).toBeInstanceOf(TRPCClientError);
    expect((trpc as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(403);
    expect(await rolesOf(env, member.membershipId)).toEqual(['member']);
    // What the member may do without a scope still works.
    expect((await http.get('/_widgets/UserProfile/me')).status).toBe(200);
  });

  it('grants the asked scopes that the roles hold, in the order asked, once each', async () => {
    const { env, organizationId, issued } = await adminWithToken([
      'widgets:sso:manage',
      'widgets:users-table:manage',
      'widgets:sso:manage',
      'widgets:pipes:manage',
    ]);
    expect(issued.status).toBe(201);
    // pipes: known to the widgets, held by no role here.
    expect(decodeJwt(issued.body.token).permissions).toEqual(['widgets:sso:manage', 'widgets:users-table:manage']);
    // A role given the permission grants it to a member holding that role.
    const role = await env.http.post('/authorization/roles', { slug: 'people-manager', name: 'People manager' });
    expect(role.status).toBe(201);
    const granted = await env.http.post('/authorization/roles/people-manager/permissions', {
      slug: 'widgets:users-table:manage',
    });
    expect(granted.status).toBeLessThan(300);
    const manager = await addMember(env, organizationId, { roleSlug: 'people-manager' });
    const theirs = await widgetToken(env, {
      organization_id: organizationId,
      user_id: manager.userId,
      scopes: ALL_WIDGET_SCOPES,
    });
    expect(decodeJwt(theirs.body.token).permissions).toEqual(['widgets:users-table:manage']);
    expect((await clientFor(env, theirs.body.token).http.get(`${BASE}/members`)).status).toBe(200);
  });

  it("refuses a demoted admin's earlier token at once, on REST, GraphQL and tRPC", async () => {
    const { env, admin, issued } = await adminWithToken();
    const { http, graphql } = clientFor(env, issued.body.token);
    expect((await http.get(`${BASE}/members`)).status).toBe(200);

    const demoted = await env.http.put(`/user_management/organization_memberships/${admin.membershipId}`, {
      role_slug: 'member',
    });
    expect(demoted.status).toBe(200);
    expect((await http.get(`${BASE}/members`)).status).toBe(403);
    const rest = await http.post(`${BASE}/members/${admin.userId}`, { roles: ['admin'] });
    expect(rest).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const gql = await graphql(UPDATE_ROLE, { input: { userId: admin.userId, roleSlugs: ['admin'] } });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const trpc = await trpcFor(env, issued.body.token)
      .client.members.updateRole.mutate({ userId: admin.userId, roleSlugs: ['admin'] })
      .catch((e: unknown) => e);
    expect((trpc as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(403);
    expect(await rolesOf(env, admin.membershipId)).toEqual(['member']);

    // Promoted again, the same token works again: the permission is the roles' of the moment.
    await env.http.put(`/user_management/organization_memberships/${admin.membershipId}`, { role_slug: 'admin' });
    expect((await http.get(`${BASE}/members`)).status).toBe(200);
  });

  it('checks a refused token once per request on REST and tRPC: its permissions read alone, nothing changed', async () => {
    const { env, admin, issued } = await adminWithToken();
    const { http } = clientFor(env, issued.body.token);
    // The first use verifies the token and reads the environment (both cached after).
    expect((await http.get(`${BASE}/members`)).status).toBe(200);
    const deactivated = await env.http.put(
      `/user_management/organization_memberships/${admin.membershipId}/deactivate`,
      {},
    );
    expect(deactivated.status).toBe(200);

    // Refused on its next use on each transport, by one read of the permissions the membership holds.
    const get = await statementsOf(env.deps.db, () => http.get(`${BASE}/members`));
    expect(get.result).toMatchObject({ status: 403, body: { code: 'invalid_client_token' } });
    expect(get.statements).toHaveLength(1);
    expect(get.statements[0]).toMatch(/"permissions"[\s\S]*from "organization_memberships"/);
    const post = await statementsOf(env.deps.db, () =>
      http.post(`${BASE}/members/${admin.userId}`, { roles: ['admin'] }),
    );
    expect(post.result).toMatchObject({ status: 403, body: { code: 'invalid_client_token' } });
    expect(post.statements).toHaveLength(1);
    const trpc = await statementsOf(env.deps.db, () =>
      trpcFor(env, issued.body.token)
        .client.members.updateRole.mutate({ userId: admin.userId, roleSlugs: ['admin'] })
        .catch((e: unknown) => e),
    );
    expect((trpc.result as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(403);
    expect(trpc.statements).toHaveLength(1);
    expect(await rolesOf(env, admin.membershipId)).toEqual(['admin']);
  });
});

describe('widget token request (upstream WidgetSessionTokenDto)', () => {
  it('without user_id: the scopes asked for, for the organization, and no user operations', async () => {
    const env = await newEnvironment();
    const { organizationId } = await organizationWithMember(env);
    const before = await stored(env);
    const issued = await widgetToken(env, {
      organization_id: organizationId,
      scopes: ['widgets:domain-verification:manage'],
    });
    expect(issued.status).toBe(201);
    const claims = decodeJwt(issued.body.token);
    expect(claims).toMatchObject({ org_id: organizationId, permissions: ['widgets:domain-verification:manage'] });
    expect(claims.sid).toMatch(/^widget_session_/);
    expect(claims.sub).toBe(claims.sid);
    const { http } = clientFor(env, issued.body.token);
    expect((await http.get('/_widgets/admin-portal/organization-domains')).status).toBe(200);
    expect((await http.get(`${BASE}/members`)).status).toBe(403);
    for (const path of ['/_widgets/UserProfile/me', '/_widgets/UserProfile/sessions'])
      expect((await http.get(path)).status).toBe(403);
    expect(await stored(env)).toEqual(before);

    // The organization deleted, the token is refused.
    await env.http.delete(`/organizations/${organizationId}`);
    expect((await http.get('/_widgets/admin-portal/organization-domains')).status).toBe(403);
  });

  it('without scopes: a token with none; without organization_id, an unknown one, user or a non-member: refused, nothing stored', async () => {
    const env = await newEnvironment();
    const { organizationId, member } = await organizationWithMember(env);
    const bare = await widgetToken(env, { organization_id: organizationId, user_id: member.userId });
    expect(bare.status).toBe(201);
    expect(decodeJwt(bare.body.token).permissions).toEqual([]);

    const outsider = await env.http.post('/user_management/users', { email: `out-${Date.now()}@example.com` });
    const before = await stored(env);
    const refused = [
      [await widgetToken(env, { user_id: member.userId, scopes: [] }), 422],
      [await widgetToken(env, { organization_id: 'org_01NOPE', user_id: member.userId }), 404],
      [await widgetToken(env, { organization_id: organizationId, user_id: 'user_01NOPE' }), 404],
      [await widgetToken(env, { organization_id: organizationId, user_id: outsider.body.id }), 422],
      [await widgetToken(env, { organization_id: organizationId, scopes: ['widgets:everything'] }), 422],
    ] as const;
    for (const [res, status] of refused) {
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ message: expect.any(String) });
    }
    expect(refused[3]?.[0].body).toMatchObject({ code: 'organization_membership_required' });
    expect(await stored(env)).toEqual(before);
  });
});

describe('a widget token is not a session (item 11)', () => {
  it('issuing widget tokens stores no session, records no event and signs no one in', async () => {
    const env = await newEnvironment();
    const { organizationId, member } = await organizationWithMember(env);
    const before = await stored(env);
    const tokens = [];
    for (let i = 0; i < 3; i++) {
      const res = await widgetToken(env, { organization_id: organizationId, user_id: member.userId, scopes: [] });
      expect(res.status).toBe(201);
      tokens.push(res.body.token as string);
      expect((await clientFor(env, res.body.token).http.get('/_widgets/UserProfile/me')).status).toBe(200);
    }
    expect(await stored(env)).toEqual(before);
    expect((await env.http.get(`/user_management/users/${member.userId}`)).body.last_sign_in_at).toBeNull();
    expect((await env.http.get(`/user_management/users/${member.userId}/sessions`)).body.data).toEqual([]);
    // Each has its own id, none of them a session.
    expect(new Set(tokens.map((t) => decodeJwt(t).sid)).size).toBe(3);
  });

  it('UserSessions lists only the real sessions, and signing out of all other devices keeps the widget working', async () => {
    const env = await newEnvironment();
    // Two real sessions of the user (operation-20 tokens) and the widget's own token.
    const real = await clientSetup(env, { kind: 'client' });
    const other = await anotherToken(env, real.organizationId, real.userId);
    const otherSid = String(decodeJwt(other).sid);
    const issued = await widgetToken(env, { organization_id: real.organizationId, user_id: real.userId });
    const widget = clientFor(env, issued.body.token);

    const listed = await widget.http.get('/_widgets/UserProfile/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id).sort()).toEqual(
      [String(real.claims.sid), otherSid].sort(),
    );
    const gql = await widget.graphql('{ sessions { id isCurrent } }');
    expect(gql.body.data.sessions.map((s: { isCurrent: boolean }) => s.isCurrent)).toEqual([false, false]);

    // The host passes its real session as currentSessionId; the widget signs the others out.
    const res = await widget.http.request('DELETE', '/_widgets/UserProfile/sessions/revoke-all', {
      body: { currentSessionId: real.claims.sid },
    });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect((await clientFor(env, other).http.get('/_widgets/UserProfile/me')).status).toBe(403);
    expect((await real.http.get('/_widgets/UserProfile/me')).status).toBe(200);
    const after = await widget.http.get('/_widgets/UserProfile/sessions');
    expect(after.status).toBe(200);
    expect(after.body.data.map((s: { id: string }) => s.id)).toEqual([String(real.claims.sid)]);

    // Signed out everywhere else from the real session, the widget still works too.
    expect((await real.graphql('mutation { revokeAllSessions { __typename } }')).status).toBe(200);
    expect((await widget.http.get('/_widgets/UserProfile/me')).status).toBe(200);
  });

  it("the widget token's own id is no session to revoke", async () => {
    const env = await newEnvironment();
    const real = await clientSetup(env, { kind: 'client' });
    const issued = await widgetToken(env, { organization_id: real.organizationId, user_id: real.userId });
    const widget = clientFor(env, issued.body.token);
    const own = String(decodeJwt(issued.body.token).sid);
    expect((await real.http.delete(`/_widgets/UserProfile/sessions/revoke/${own}`)).status).toBe(404);
    expect((await widget.http.get('/_widgets/UserProfile/me')).status).toBe(200);
  });
});
