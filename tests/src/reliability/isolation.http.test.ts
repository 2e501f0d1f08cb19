import { beforeAll, describe, expect, it } from 'vitest';
import { storedCounts } from '../helpers/store.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { type Fixture, makeFixture, snapshot, uniqueEmail } from './catalog.ts';

/**
 * Environment isolation for every resource: everything of environment A (users, memberships,
 * groups and their members, connections, agent registrations, events, webhook endpoints) is a
 * 404 through a key of environment B, for reads and for writes, invisible in B's lists and
 * filters, and A's data is unchanged afterwards.
 */
let a: Fixture;
let b: TestEnvironment;
let before: Record<string, number>;
const readsOfA: Record<string, string> = {};

/** Placeholder ids for the test labels (the real ids exist only once the fixture is made). */
const dummy: Fixture = {
  env: undefined as unknown as TestEnvironment,
  organizationId: ':org',
  domainId: ':domain',
  userId: ':user',
  membershipId: ':membership',
  groupId: ':group',
  connectionId: ':connection',
  registrationId: ':registration',
  agentApiKey: ':agent_key',
  webhookEndpointId: ':endpoint',
  clientId: ':client',
  spareMembershipId: ':spare_membership',
  spareUserId: ':spare_user',
  invitationId: ':invitation',
  invitationToken: ':invitation_token',
  userExternalId: ':user_external_id',
  sessionId: ':session',
  itContactId: ':it_contact',
  organizationApiKeyId: ':org_api_key',
  organizationApiKey: ':org_api_key_value',
  environmentRoleSlug: ':env_role',
  organizationRoleSlug: ':org_role',
  permissionSlug: ':permission',
  sparePermissionSlug: ':spare_permission',
  widgetToken: ':widget_token',
  clientHttp: undefined as unknown as Fixture['clientHttp'],
  directoryId: ':directory',
  directoryUserId: ':directory_user',
  directoryGroupId: ':directory_group',
  auditLogExportId: ':audit_log_export',
};

type Attempt = [method: string, path: (f: Fixture) => string, body?: (f: Fixture) => unknown];

const org = (f: Fixture) => `/organizations/${f.organizationId}`;
const group = (f: Fixture) => `${org(f)}/groups/${f.groupId}`;
const envRole = (f: Fixture) => `/authorization/roles/${f.environmentRoleSlug}`;
const orgRole = (f: Fixture) => `/authorization/organizations/${f.organizationId}/roles/${f.organizationRoleSlug}`;

/** Requests that name one of A's resources: each must be 404 entity_not_found through B. */
const ATTEMPTS: Attempt[] = [
  ['GET', (f) => `/audit_logs/exports/${f.auditLogExportId}`],
  ['GET', (f) => `/user_management/users/${f.userId}`],
  ['PUT', (f) => `/user_management/users/${f.userId}`, () => ({ first_name: 'stolen' })],
  ['DELETE', (f) => `/user_management/users/${f.userId}`],
  ['GET', (f) => `/user_management/users/external_id/${f.userExternalId}`],
  ['GET', (f) => `/user_management/users/${f.userId}/sessions`],
  ['POST', () => '/user_management/sessions/revoke', (f) => ({ session_id: f.sessionId })],
  ['GET', (f) => `/user_management/organization_memberships/${f.membershipId}`],
  ['PUT', (f) => `/user_management/organization_memberships/${f.membershipId}/deactivate`, () => ({})],
  ['PUT', (f) => `/user_management/organization_memberships/${f.membershipId}/reactivate`, () => ({})],
  ['DELETE', (f) => `/user_management/organization_memberships/${f.membershipId}`],
  ['GET', (f) => `/user_management/organization_memberships/${f.membershipId}/groups`],
  [
    'POST',
    () => '/user_management/organization_memberships',
    (f) => ({ user_id: f.spareUserId, organization_id: f.organizationId }),
  ],
  ['GET', (f) => `/user_management/invitations/${f.invitationId}`],
  ['GET', (f) => `/user_management/invitations/by_token/${f.invitationToken}`],
  ['POST', (f) => `/user_management/invitations/${f.invitationId}/accept`, () => ({})],
  ['POST', (f) => `/user_management/invitations/${f.invitationId}/revoke`, () => ({})],
  ['POST', (f) => `/user_management/invitations/${f.invitationId}/resend`, () => ({})],
  [
    'POST',
    () => '/user_management/invitations',
    (f) => ({ email: 'x@example.com', organization_id: f.organizationId }),
  ],
  ['GET', (f) => `${org(f)}/groups`],
  ['POST', (f) => `${org(f)}/groups`, () => ({ name: 'stolen' })],
  ['GET', group],
  ['PATCH', group, () => ({ name: 'stolen' })],
  ['DELETE', group],
  ['GET', (f) => `${group(f)}/organization-memberships`],
  ['POST', (f) => `${group(f)}/organization-memberships`, (f) => ({ organization_membership_id: f.spareMembershipId })],
  ['DELETE', (f) => `${group(f)}/organization-memberships/${f.membershipId}`],
  ['POST', () => '/client/token', (f) => ({ organization_id: f.organizationId, user_id: f.userId })],
  ['POST', () => '/widgets/token', (f) => ({ organization_id: f.organizationId, user_id: f.userId, scopes: [] })],
  ['GET', (f) => `/agents/registrations/${f.registrationId}`],
  ['GET', (f) => `${org(f)}/it_contacts`],
  ['POST', (f) => `${org(f)}/it_contacts`, () => ({ email: 'stolen@example.com' })],
  ['DELETE', (f) => `${org(f)}/it_contacts/${f.itContactId}`],
  ['POST', (f) => `${org(f)}/it_contacts/${f.itContactId}/invite`, () => ({ intents: ['sso'] })],
  ['POST', (f) => `${org(f)}/it_contacts/${f.itContactId}/revoke`, () => ({})],
  ['GET', (f) => `${org(f)}/api_keys`],
  ['POST', (f) => `${org(f)}/api_keys`, () => ({ name: 'stolen' })],
  ['DELETE', (f) => `/api_keys/${f.organizationApiKeyId}`],
  ['GET', (f) => `/directories/${f.directoryId}`],
  ['DELETE', (f) => `/directories/${f.directoryId}`],
  ['GET', (f) => `/directory_users/${f.directoryUserId}`],
  ['GET', (f) => `/directory_users?directory=${f.directoryId}`],
  ['GET', (f) => `/directory_users?group=${f.directoryGroupId}`],
  ['GET', (f) => `/directory_groups/${f.directoryGroupId}`],
  ['GET', (f) => `/directory_groups?directory=${f.directoryId}`],
  ['GET', (f) => `/directory_groups?user=${f.directoryUserId}`],
  ['GET', (f) => `/connections/${f.connectionId}`],
  ['DELETE', (f) => `/connections/${f.connectionId}`],
  ['GET', (f) => `/webhook_endpoints/${f.webhookEndpointId}`],
  [
    'PATCH',
    (f) => `/webhook_endpoints/${f.webhookEndpointId}`,
    () => ({ endpoint_url: 'https://evil.example.com/', status: 'disabled' }),
  ],
  ['DELETE', (f) => `/webhook_endpoints/${f.webhookEndpointId}`],
  ['PUT', (f) => `/user_management/organization_memberships/${f.membershipId}`, () => ({ role_slug: 'admin' })],
  ['GET', (f) => envRole(f)],
  ['PATCH', (f) => envRole(f), () => ({ name: 'stolen' })],
  ['DELETE', (f) => envRole(f)],
  ['PUT', (f) => `${envRole(f)}/permissions`, () => ({ permissions: [] })],
  ['POST', (f) => `${envRole(f)}/permissions`, (f) => ({ slug: f.permissionSlug })],
  ['PUT', () => '/authorization/default_role', (f) => ({ slug: f.environmentRoleSlug })],
  ['GET', (f) => `/authorization/organizations/${f.organizationId}/roles`],
  ['POST', (f) => `/authorization/organizations/${f.organizationId}/roles`, () => ({ slug: 'org-stolen', name: 'x' })],
  ['GET', (f) => orgRole(f)],
  ['GET', (f) => `/authorization/organizations/${f.organizationId}/roles/member`],
  ['PATCH', (f) => orgRole(f), () => ({ name: 'stolen' })],
  ['DELETE', (f) => orgRole(f)],
  ['PUT', (f) => `${orgRole(f)}/permissions`, () => ({ permissions: [] })],
  ['POST', (f) => `${orgRole(f)}/permissions`, (f) => ({ slug: f.permissionSlug })],
  ['DELETE', (f) => `${orgRole(f)}/permissions/${f.permissionSlug}`],
  ['GET', (f) => `/authorization/permissions/${f.permissionSlug}`],
  ['PATCH', (f) => `/authorization/permissions/${f.permissionSlug}`, () => ({ name: 'stolen' })],
  ['DELETE', (f) => `/authorization/permissions/${f.permissionSlug}`],
];

/** Lists and filters of B that could show A's data: each must show none of it. */
const LISTS: Array<[string, (f: Fixture) => string]> = [
  ['users', () => '/user_management/users?limit=100'],
  ['users by e-mail', () => '/user_management/users?email=fx'],
  ['users of A’s organization', (f) => `/user_management/users?organization_id=${f.organizationId}`],
  ['memberships', () => '/user_management/organization_memberships?limit=100'],
  ['memberships of A’s user', (f) => `/user_management/organization_memberships?user_id=${f.userId}`],
  [
    'memberships of A’s organization',
    (f) => `/user_management/organization_memberships?organization_id=${f.organizationId}`,
  ],
  ['connections', () => '/connections?limit=100'],
  ['connections of A’s organization', (f) => `/connections?organization_id=${f.organizationId}`],
  ['events', () => '/events?limit=100'],
  ['events of A’s organization', (f) => `/events?organization_id=${f.organizationId}`],
  ['webhook endpoints', () => '/webhook_endpoints?limit=100'],
  ['invitations', () => '/user_management/invitations?limit=100'],
  ['invitations of A’s organization', (f) => `/user_management/invitations?organization_id=${f.organizationId}`],
  ['permissions', () => '/authorization/permissions?limit=100'],
  ['directories', () => '/directories?limit=100'],
  ['directories of A’s organization', (f) => `/directories?organization_id=${f.organizationId}`],
];

/** A's resources as A reads them (to check they did not change). */
const READS: Array<(f: Fixture) => string> = [
  (f) => `/user_management/users/${f.userId}`,
  (f) => `/user_management/users/${f.userId}/sessions`,
  (f) => `/user_management/organization_memberships/${f.membershipId}`,
  group,
  (f) => `${group(f)}/organization-memberships`,
  (f) => `/agents/registrations/${f.registrationId}`,
  (f) => `/webhook_endpoints/${f.webhookEndpointId}`,
  (f) => `/user_management/invitations/${f.invitationId}`,
  (f) => `/connections?organization_id=${f.organizationId}`,
  (f) => `/connections/${f.connectionId}`,
  (f) => `${org(f)}/it_contacts`,
  (f) => `${org(f)}/api_keys`,
  () => '/events?limit=100',
  (f) => envRole(f),
  (f) => `/authorization/organizations/${f.organizationId}/roles`,
  () => '/authorization/permissions?limit=100',
  () => '/authorization/default_role',
  (f) => `/directories/${f.directoryId}`,
  (f) => `/directory_users?directory=${f.directoryId}`,
  (f) => `/directory_groups/${f.directoryGroupId}`,
];

beforeAll(async () => {
  a = await makeFixture(await newEnvironment());
  b = await newEnvironment();
  before = await snapshot(a.env);
  for (const read of READS) readsOfA[read(a)] = (await a.env.http.get(read(a))).text;
});

describe('environment isolation of every resource', () => {
  it.each(ATTEMPTS.map(([method, path, body]) => [`${method} ${path({ ...dummy })}`, method, path, body] as const))(
    '%s on A’s resource through B’s key is 404',
    async (_label, method, path, body) => {
      const res = await b.http.request(method, path(a), body ? { body: body(a) } : {});
      expect(res.status, res.text).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    },
  );

  it.each(LISTS)('B’s list of %s shows nothing of A', async (_label, path) => {
    const res = await b.http.get(path(a));
    expect(res.status, res.text).toBe(200);
    // B's own system permissions (every environment's; none of A's ids) are all B's list holds.
    const own = res.body.data.filter((item: { system?: boolean }) => item.system !== true);
    expect({ ...res.body, data: own }).toMatchObject({ data: [], list_metadata: { before: null, after: null } });
  });

  it('B cannot validate A’s agent credential, nor add its own membership to A’s group', async () => {
    const validation = await b.http.post('/agents/credentials/validate', {
      type: 'api_key',
      credential: a.agentApiKey,
    });
    expect(validation.status).toBe(200);
    expect(validation.body).toMatchObject({ valid: false, registration_id: null });
    // B's own membership, aimed at A's group: still A's group is not found.
    const bOrg = (await b.http.post('/organizations', { name: 'B' })).body.id;
    const bUser = (await b.http.post('/user_management/users', { email: uniqueEmail('b') })).body.id;
    const bMembership = (
      await b.http.post('/user_management/organization_memberships', { user_id: bUser, organization_id: bOrg })
    ).body.id;
    const res = await b.http.post(`${group(a)}/organization-memberships`, { organization_membership_id: bMembership });
    expect(res.status).toBe(404);
    // … and A cannot add B's membership to its group either.
    const back = await a.env.http.post(`${group(a)}/organization-memberships`, {
      organization_membership_id: bMembership,
    });
    expect(back.status).toBe(404);
  });

  it('B cannot validate A’s organization API key (null), which A still validates', async () => {
    const theirs = await b.http.post('/api_keys/validations', { value: a.organizationApiKey });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({ api_key: null });
    const own = await a.env.http.post('/api_keys/validations', { value: a.organizationApiKey });
    expect(own.body.api_key.id).toBe(a.organizationApiKeyId);
  });

  it('leaves everything of A as it was', async () => {
    // Runs after the attempts above (vitest runs a file's tests in order).
    expect(await snapshot(a.env)).toEqual(before);
    for (const read of READS) expect((await a.env.http.get(read(a))).text, read(a)).toBe(readsOfA[read(a)]);
  });
});

describe('environment isolation of organizations and domains', () => {
  it('makes everything of environment A a 404 through a key of environment B, writes included', async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const domain = uniqueDomain();
    const org = (
      await a.http.post('/organizations', {
        name: 'A',
        external_id: 'iso-1',
        domain_data: [{ domain, state: 'pending' }],
      })
    ).body;
    const domainId = org.domains[0].id as string;
    const before = await storedCounts(a);

    const attempts: [string, string, unknown?][] = [
      ['GET', `/organizations/${org.id}`],
      ['GET', '/organizations/external_id/iso-1'],
      ['PUT', `/organizations/${org.id}`, { name: 'stolen' }],
      ['DELETE', `/organizations/${org.id}`],
      ['GET', `/organization_domains/${domainId}`],
      ['POST', `/organization_domains/${domainId}/verify`, {}],
      ['DELETE', `/organization_domains/${domainId}`],
      ['POST', '/organization_domains', { organization_id: org.id, domain: uniqueDomain() }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await b.http.request(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    const message = (await b.http.get(`/organizations/${org.id}`)).body.message;
    const missing = (await b.http.get('/organizations/org_01J00000000000000000000000')).body.message;
    expect(message.replace(org.id, 'ID')).toBe(missing.replace('org_01J00000000000000000000000', 'ID'));

    // Lists and filters of B never show A's data.
    expect((await b.http.get('/organizations')).body.data).toEqual([]);
    expect((await b.http.get(`/organizations?domains=${domain}`)).body.data).toEqual([]);
    // B may claim the same domain name for itself: claims are per environment.
    const own = await b.http.post('/organizations', { name: 'B', domain_data: [{ domain, state: 'verified' }] });
    expect(own.status).toBe(201);

    // Nothing of A changed.
    expect(await storedCounts(a)).toEqual(before);
    expect((await a.http.get(`/organizations/${org.id}`)).body).toEqual(org);
    expect((await b.caller.organizations.list({ limit: 10, order: 'desc' })).data.map((o) => o.name)).toEqual(['B']);
  });
});
