import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '@atrium/rest-facade';
import type { AppRouter, Deps, MailMessage } from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { ClientError, GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { storedEvents } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { getWorld, newEnvironment } from '../helpers/world.ts';
import { addMember, invitationsOf, membershipsOf } from './members-helpers.ts';

/** A server of the worker's database whose invitations are "mailed" into `sent`. */
const sent: MailMessage[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  const world = await getWorld();
  const deps: Deps = { ...world.deps, mailer: { send: async (message) => void sent.push(message) } };
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** graphql-request (the widgets' transport) and typed tRPC, with the token, on the mailing server. */
function clients(token: string) {
  const headers = { Authorization: `Bearer ${token}`, 'WorkOS-Widgets-Type': 'user-management', ...WIDGET_HEADERS };
  const gql = new GraphQLClient(`${url}/client/graphql`, { headers });
  const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers })] });
  return { gql, trpc };
}

const MEMBERS = `query Members($after: String, $before: String, $limit: Int, $roleSlug: String, $search: String) {
  organizationMemberships(after: $after, before: $before, limit: $limit, roleSlug: $roleSlug, search: $search) {
    data { id email emailVerified firstName lastName profilePictureUrl lastActivityAt createdAt status roles { name slug } }
    listMetadata { before after }
  }
}`;

const INVITE = `mutation Invite($input: InviteUserInput!) {
  inviteUser(input: $input) {
    __typename
    ... on UserInvited { invitation { id email status roleSlug expiresAt createdAt } }
    ... on InviteeAlreadyMember { email }
    ... on InviteeAlreadyInvited { email }
    ... on InvalidInviteeEmail { email }
    ... on InvalidInviteeRole { roleSlug }
  }
}`;

const ID_MUTATIONS = {
  resendInvitation: `mutation R($input: ResendInvitationInput!) { resendInvitation(input: $input) { __typename
    ... on InvitationResent { invitation { id status } } ... on ResendInvitationNotFound { userId } } }`,
  revokeInvitation: `mutation R($input: RevokeInvitationInput!) { revokeInvitation(input: $input) { __typename
    ... on InvitationRevoked { invitation { id status } } ... on InvitationNotFound { userId }
    ... on InvitationNotPending { userId } } }`,
  removeMember: `mutation R($input: RemoveMemberInput!) { removeMember(input: $input) { __typename
    ... on MemberRemoved { userId } ... on MemberNotFound { userId } ... on MemberIsManagedByDirectory { userId } } }`,
};

const UPDATE_ROLE = `mutation U($input: UpdateMemberRoleInput!) { updateMemberRole(input: $input) { __typename
  ... on MemberRoleUpdated { member { id roles { slug } status } } ... on MemberNotFound { userId }
  ... on RoleNotFound { roleSlugs } } }`;

describe('members on /client/graphql (graphql-request)', () => {
  it('lists members and invitations, pages both ways, and reads roles and permissions', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { roleSlug: 'admin' });
    for (let i = 0; i < 3; i++) await addMember(env, a.organizationId);
    const { gql } = clients(a.token);
    await gql.request(INVITE, { input: { email: uniqueEmail('inv') } });

    const first: any = await gql.request(MEMBERS, { limit: 2 });
    const page1 = first.organizationMemberships;
    expect(page1.data).toHaveLength(2);
    expect(page1.data[0]).toMatchObject({ id: a.userId, status: 'Active', roles: [{ name: 'Admin', slug: 'admin' }] });
    expect(page1.listMetadata).toEqual({ before: null, after: expect.any(String) });
    const page2 = ((await gql.request(MEMBERS, { limit: 2, after: page1.listMetadata.after })) as any)
      .organizationMemberships;
    const page3 = ((await gql.request(MEMBERS, { limit: 2, after: page2.listMetadata.after })) as any)
      .organizationMemberships;
    expect(page3.data.map((m: { status: string }) => m.status)).toEqual(['Invited']);
    expect(page3.listMetadata.after).toBeNull();
    const back = ((await gql.request(MEMBERS, { limit: 2, before: page3.listMetadata.before })) as any)
      .organizationMemberships;
    expect(back.data).toEqual(page2.data);
    // A page is 1 to 100 rows, as on every list: past it the query fails as bad input, and reads nothing.
    await expect(gql.request(MEMBERS, { limit: 101 })).rejects.toMatchObject({
      response: { errors: [{ extensions: { code: 'BAD_USER_INPUT', status: 422 } }] },
    });
    const admins: any = await gql.request(MEMBERS, { roleSlug: 'admin', search: '' });
    expect(admins.organizationMemberships.data.map((m: { id: string }) => m.id)).toEqual([a.userId]);

    const roles: any = await gql.request('{ roles { multipleRolesEnabled roles { id name slug isDefault } } }');
    expect(roles.roles.multipleRolesEnabled).toBe(true);
    expect(roles.roles.roles.map((r: { slug: string; isDefault: boolean }) => [r.slug, r.isDefault])).toEqual([
      ['member', true],
      ['admin', false],
    ]);
    const adminRole = roles.roles.roles[1];
    const one: any = await gql.request('query R($id: ID!) { role(id: $id) { id slug } }', { id: adminRole.id });
    expect(one.role).toEqual({ id: adminRole.id, slug: 'admin' });
    const none: any = await gql.request('query R($id: ID!) { role(id: $id) { id } }', { id: 'role_nope' });
    expect(none.role).toBeNull();

    await env.http.post('/authorization/permissions', { slug: 'posts:write', name: 'Write posts' });
    await env.http.post('/authorization/permissions', { slug: 'posts:read', name: 'Read posts' });
    await env.http.post('/authorization/roles/admin/permissions', { slug: 'posts:write' });
    const perms: any = await gql.request(
      '{ permissions(limit: 10) { data { slug name system } listMetadata { after } } }',
    );
    expect(perms.permissions.data.map((p: { slug: string }) => p.slug)).toEqual(
      expect.arrayContaining(['posts:write', 'posts:read']),
    );
    const searched: any = await gql.request('{ permissions(search: "WRITE") { data { slug } } }');
    expect(searched.permissions.data).toEqual([{ slug: 'posts:write' }]);
    const effective: any = await gql.request('query E($u: ID!) { effectivePermissions(userId: $u) { slug } }', {
      u: a.userId,
    });
    // Admin also holds the widgets' system permissions every environment starts with.
    expect(effective.effectivePermissions.map((p: { slug: string }) => p.slug).sort()).toEqual([
      'posts:write',
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

  it('invites (mail sent, Invited row), resends (mailed again), revokes, with the declared variants', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const member = await addMember(env, a.organizationId);
    const { gql } = clients(a.token);
    const email = uniqueEmail('invitee');
    const before = sent.length;

    const invited: any = await gql.request(INVITE, { input: { email, roleSlug: 'admin' } });
    expect(invited.inviteUser).toMatchObject({
      __typename: 'UserInvited',
      invitation: { email, status: 'Pending', roleSlug: 'admin' },
    });
    expect(sent.slice(before).map((m) => m.to)).toEqual([email]);
    const id = invited.inviteUser.invitation.id;
    const listed: any = await gql.request(MEMBERS, { search: email });
    expect(listed.organizationMemberships.data).toMatchObject([{ id, status: 'Invited', roles: [{ slug: 'admin' }] }]);

    const refusals: [Record<string, unknown>, string][] = [
      [{ email: member.email }, 'InviteeAlreadyMember'],
      [{ email }, 'InviteeAlreadyInvited'],
      [{ email: 'nope' }, 'InvalidInviteeEmail'],
      [{ email: uniqueEmail('x'), roleSlug: 'ghost' }, 'InvalidInviteeRole'],
    ];
    for (const [input, typename] of refusals) {
      const res: any = await gql.request(INVITE, { input });
      expect(res.inviteUser.__typename).toBe(typename);
    }
    expect(await invitationsOf(env, a.organizationId)).toHaveLength(1);

    const resent: any = await gql.request(ID_MUTATIONS.resendInvitation, { input: { userId: id } });
    expect(resent.resendInvitation).toEqual({ __typename: 'InvitationResent', invitation: { id, status: 'Pending' } });
    expect(sent.slice(before).map((m) => m.to)).toEqual([email, email]);
    const revoked: any = await gql.request(ID_MUTATIONS.revokeInvitation, { input: { userId: id } });
    expect(revoked.revokeInvitation).toEqual({
      __typename: 'InvitationRevoked',
      invitation: { id, status: 'Revoked' },
    });
    const again: any = await gql.request(ID_MUTATIONS.revokeInvitation, { input: { userId: id } });
    expect(again.revokeInvitation).toEqual({ __typename: 'InvitationNotPending', userId: id });
    const missing: any = await gql.request(ID_MUTATIONS.resendInvitation, { input: { userId: 'invitation_nope' } });
    expect(missing.resendInvitation.__typename).toBe('ResendInvitationNotFound');
    const names = (await storedEvents(env)).map((e) => e.event);
    expect(names.filter((n) => n.startsWith('invitation.'))).toEqual([
      'invitation.created',
      'invitation.resent',
      'invitation.revoked',
    ]);
  });

  it('updates roles and removes members with the declared variants; the last admin is a CONFLICT error (409)', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const admin = await addMember(env, a.organizationId, { roleSlug: 'admin' });
    const managed = await addMember(env, a.organizationId, { directoryManaged: true });
    const other = await clientSetup(env);
    const { gql } = clients(a.token);

    const lastAdmin = await gql
      .request(UPDATE_ROLE, { input: { userId: admin.userId, roleSlugs: ['member'] } })
      .catch((e: unknown) => e);
    expect(lastAdmin).toBeInstanceOf(ClientError);
    expect((lastAdmin as ClientError).response.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/last admin/),
      extensions: { code: 'CONFLICT' },
    });
    const removeAdmin = await gql
      .request(ID_MUTATIONS.removeMember, { input: { userId: admin.userId } })
      .catch((e) => e);
    expect((removeAdmin as ClientError).response.errors?.[0]?.extensions?.code).toBe('CONFLICT');

    const promoted: any = await gql
      .request(UPDATE_ROLE, { input: { userId: managed.userId, roleSlugs: ['admin'] } })
      .catch((e) => e);
    expect((promoted as ClientError).response.errors?.[0]?.message).toMatch(/directory/);
    const mark = (await storedEvents(env)).length;
    const updated: any = await gql.request(UPDATE_ROLE, { input: { userId: a.userId, roleSlugs: ['admin'] } });
    expect(updated.updateMemberRole).toEqual({
      __typename: 'MemberRoleUpdated',
      member: { id: a.userId, roles: [{ slug: 'admin' }], status: 'Active' },
    });
    const unknown: any = await gql.request(UPDATE_ROLE, { input: { userId: a.userId, roleSlugs: ['ghost'] } });
    expect(unknown.updateMemberRole).toEqual({ __typename: 'RoleNotFound', roleSlugs: ['ghost'] });
    const foreign: any = await gql.request(UPDATE_ROLE, { input: { userId: other.userId, roleSlugs: ['admin'] } });
    expect(foreign.updateMemberRole).toEqual({ __typename: 'MemberNotFound', userId: other.userId });

    const removed: any = await gql.request(ID_MUTATIONS.removeMember, { input: { userId: admin.userId } });
    expect(removed.removeMember).toEqual({ __typename: 'MemberRemoved', userId: admin.userId });
    const directory: any = await gql.request(ID_MUTATIONS.removeMember, { input: { userId: managed.userId } });
    expect(directory.removeMember).toEqual({ __typename: 'MemberIsManagedByDirectory', userId: managed.userId });
    const absent: any = await gql.request(ID_MUTATIONS.removeMember, { input: { userId: other.userId } });
    expect(absent.removeMember.__typename).toBe('MemberNotFound');
    expect((await storedEvents(env)).slice(mark).map((e) => e.event)).toEqual([
      'organization_membership.updated',
      'organization_membership.deleted',
    ]);
    expect(await membershipsOf(env, other.organizationId)).toHaveLength(1);
  });

  it('answers FORBIDDEN without widgets:users-table:manage', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    const { gql } = clients(a.token);
    for (const query of [MEMBERS, '{ roles { multipleRolesEnabled } }']) {
      const error = await gql.request(query).catch((e) => e);
      expect((error as ClientError).response.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const invite = await gql.request(INVITE, { input: { email: uniqueEmail('x') } }).catch((e) => e);
    expect((invite as ClientError).response.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await invitationsOf(env, a.organizationId)).toHaveLength(0);
  });
});

describe('members through typed tRPC (client.members.*)', () => {
  it('runs every operation with the GraphQL shapes', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { roleSlug: 'admin' });
    const b = await addMember(env, a.organizationId);
    const c = await addMember(env, a.organizationId);
    const { trpc } = clients(a.token);

    const page = await trpc.client.members.list.query({ limit: 2 });
    expect(page.data.map((m) => m.id)).toEqual([a.userId, b.userId]);
    expect(page.listMetadata.before).toBeNull();
    const next = await trpc.client.members.list.query({ limit: 2, after: page.listMetadata.after ?? undefined });
    expect(next.data.map((m) => m.id)).toEqual([c.userId]);
    const prev = await trpc.client.members.list.query({ limit: 2, before: next.listMetadata.before ?? undefined });
    expect(prev.data.map((m) => m.id)).toEqual([a.userId, b.userId]);

    const roles = await trpc.client.members.roles.query();
    expect(roles.roles.map((r) => r.slug)).toEqual(['member', 'admin']);

    const before = sent.length;
    const invited = await trpc.client.members.invite.mutate({ email: uniqueEmail('inv') });
    expect(invited.__typename).toBe('UserInvited');
    expect(sent.length).toBe(before + 1);
    const id = 'invitation' in invited ? invited.invitation.id : '';
    expect((await trpc.client.members.resendInvitation.mutate({ userId: id })).__typename).toBe('InvitationResent');
    expect((await trpc.client.members.revokeInvitation.mutate({ userId: id })).__typename).toBe('InvitationRevoked');
    const updated = await trpc.client.members.updateRole.mutate({ userId: b.userId, roleSlugs: ['admin'] });
    expect(updated).toMatchObject({
      __typename: 'MemberRoleUpdated',
      member: { id: b.userId, roles: [{ slug: 'admin' }] },
    });
    expect(await trpc.client.members.remove.mutate({ userId: c.userId })).toEqual({
      __typename: 'MemberRemoved',
      userId: c.userId,
    });
    expect((await membershipsOf(env, a.organizationId)).map((m) => m.userId)).not.toContain(c.userId);
    await expect(trpc.client.members.remove.mutate({ userId: a.userId })).rejects.toThrow(/yourself/);

    const limited = clients((await clientSetup(env, { scopes: [], organizationId: a.organizationId })).token);
    await expect(limited.trpc.client.members.list.query({})).rejects.toMatchObject({ data: { httpStatus: 403 } });
  });
});
