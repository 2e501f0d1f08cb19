import { randomUUID } from 'node:crypto';
import {
  agentAccessTokens,
  agentApiKeys,
  agentIdentities,
  agentRegistrations,
  auditLogActions,
  auditLogEvents,
  auditLogExportParts,
  auditLogExports,
  auditLogSchemas,
  auditLogStreams,
  connections,
  directories,
  directoryGroupMembers,
  directoryGroups,
  directoryUsers,
  environments,
  events,
  groupMemberships,
  groups,
  idempotencyKeys,
  invitations,
  itContacts,
  membershipRoles,
  organizationApiKeys,
  organizationDomains,
  organizationMemberships,
  organizations,
  permissions,
  portalLinks,
  portalSessions,
  redirectUris as redirectUrisTable,
  rolePermissions,
  roles,
  sessionChallenges,
  sessions,
  signingKeys,
  ssoAuthorizations,
  ssoProfiles,
  users,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@atrium/db';
import { createDirectory, createDirectoryGroup, createDirectoryUser, scopeOf } from '@atrium/routers';
import { eq, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import fc from 'fast-check';
import { ALL_WIDGET_SCOPES, WIDGET_HEADERS } from '../helpers/client.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { HttpClient, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * The catalogue the reliability suites run over: every REST operation (organizations, domains,
 * users, sessions, memberships, invitations, groups and their members, roles and permissions,
 * client token, agents, JWKS, connections, IT contacts, organization API keys, events, webhook
 * endpoints), every table an environment writes to, every POST
 * that creates. A new endpoint is a new row here (and a new table a row of SCOPED_TABLES): the
 * fuzz, idempotency, race and isolation suites then cover it without further code. A test in
 * catalog.http.test.ts checks that no operation of the OpenAPI document is missing.
 */

/** Every environment-scoped table (what "nothing stored" is checked against). */
export const SCOPED_TABLES: Array<{ name: string; table: PgTable; environmentId: PgColumn }> = [
  { name: 'organizations', table: organizations, environmentId: organizations.environmentId },
  { name: 'organization_domains', table: organizationDomains, environmentId: organizationDomains.environmentId },
  { name: 'users', table: users, environmentId: users.environmentId },
  {
    name: 'organization_memberships',
    table: organizationMemberships,
    environmentId: organizationMemberships.environmentId,
  },
  { name: 'groups', table: groups, environmentId: groups.environmentId },
  { name: 'group_memberships', table: groupMemberships, environmentId: groupMemberships.environmentId },
  { name: 'signing_keys', table: signingKeys, environmentId: signingKeys.environmentId },
  { name: 'sessions', table: sessions, environmentId: sessions.environmentId },
  { name: 'agent_identities', table: agentIdentities, environmentId: agentIdentities.environmentId },
  { name: 'agent_registrations', table: agentRegistrations, environmentId: agentRegistrations.environmentId },
  { name: 'agent_api_keys', table: agentApiKeys, environmentId: agentApiKeys.environmentId },
  { name: 'agent_access_tokens', table: agentAccessTokens, environmentId: agentAccessTokens.environmentId },
  { name: 'connections', table: connections, environmentId: connections.environmentId },
  // Audit logs (issue #38).
  { name: 'audit_log_events', table: auditLogEvents, environmentId: auditLogEvents.environmentId },
  { name: 'audit_log_actions', table: auditLogActions, environmentId: auditLogActions.environmentId },
  { name: 'audit_log_schemas', table: auditLogSchemas, environmentId: auditLogSchemas.environmentId },
  { name: 'audit_log_streams', table: auditLogStreams, environmentId: auditLogStreams.environmentId },
  { name: 'audit_log_exports', table: auditLogExports, environmentId: auditLogExports.environmentId },
  { name: 'audit_log_export_parts', table: auditLogExportParts, environmentId: auditLogExportParts.environmentId },
  // Single sign-on (issue #37).
  { name: 'redirect_uris', table: redirectUrisTable, environmentId: redirectUrisTable.environmentId },
  { name: 'sso_authorizations', table: ssoAuthorizations, environmentId: ssoAuthorizations.environmentId },
  { name: 'sso_profiles', table: ssoProfiles, environmentId: ssoProfiles.environmentId },
  { name: 'it_contacts', table: itContacts, environmentId: itContacts.environmentId },
  { name: 'organization_api_keys', table: organizationApiKeys, environmentId: organizationApiKeys.environmentId },
  { name: 'events', table: events, environmentId: events.environmentId },
  { name: 'webhook_endpoints', table: webhookEndpoints, environmentId: webhookEndpoints.environmentId },
  { name: 'webhook_deliveries', table: webhookDeliveries, environmentId: webhookDeliveries.environmentId },
  { name: 'webhook_attempts', table: webhookAttempts, environmentId: webhookAttempts.environmentId },
  { name: 'idempotency_keys', table: idempotencyKeys, environmentId: idempotencyKeys.environmentId },
  { name: 'invitations', table: invitations, environmentId: invitations.environmentId },
  { name: 'roles', table: roles, environmentId: roles.environmentId },
  { name: 'permissions', table: permissions, environmentId: permissions.environmentId },
  { name: 'role_permissions', table: rolePermissions, environmentId: rolePermissions.environmentId },
  {
    name: 'organization_membership_roles',
    table: membershipRoles,
    environmentId: membershipRoles.environmentId,
  },
  // Admin portal (issue #23).
  { name: 'portal_links', table: portalLinks, environmentId: portalLinks.environmentId },
  { name: 'portal_sessions', table: portalSessions, environmentId: portalSessions.environmentId },
  // UserProfile's "Edit email": codes and elevated access of a session.
  { name: 'session_challenges', table: sessionChallenges, environmentId: sessionChallenges.environmentId },
  // Directory sync (issue #36): directories and what their identity providers write over SCIM.
  { name: 'directories', table: directories, environmentId: directories.environmentId },
  { name: 'directory_users', table: directoryUsers, environmentId: directoryUsers.environmentId },
  { name: 'directory_groups', table: directoryGroups, environmentId: directoryGroups.environmentId },
  {
    name: 'directory_group_members',
    table: directoryGroupMembers,
    environmentId: directoryGroupMembers.environmentId,
  },
];

/** Row counts of every scoped table for one environment, e.g. `{organizations: 2, …}`, in one query. */
export async function snapshot(env: TestEnvironment): Promise<Record<string, number>> {
  const columns = Object.fromEntries(
    SCOPED_TABLES.map(({ name, table, environmentId }) => [
      name,
      sql<number>`(select count(*) from ${table} where ${environmentId} = ${env.environmentId})`.mapWith(Number),
    ]),
  );
  const [row] = await env.deps.db.select(columns).from(environments).where(eq(environments.id, env.environmentId));
  if (!row) throw new Error(`snapshot: no environment ${env.environmentId}`);
  return row as Record<string, number>;
}

/** What an operation's fixtures provide: existing ids to aim valid requests at. */
export interface Fixture {
  env: TestEnvironment;
  organizationId: string;
  domainId: string;
  userId: string;
  membershipId: string;
  groupId: string;
  connectionId: string;
  registrationId: string;
  agentApiKey: string;
  webhookEndpointId: string;
  clientId: string;
  /** A member of the organization who is in no group (for group-membership adds). */
  spareMembershipId: string;
  /** A user without any membership (for membership creates). */
  spareUserId: string;
  /** A pending invitation into the organization, and its token. */
  invitationId: string;
  invitationToken: string;
  /** The external id of `userId`. */
  userExternalId: string;
  /** A session of `userId` (a client token was issued for it). */
  sessionId: string;
  /** An IT contact of the organization. */
  itContactId: string;
  /** An API key of the organization, and its value. */
  organizationApiKeyId: string;
  organizationApiKey: string;
  /** An environment role no membership holds. */
  environmentRoleSlug: string;
  /** A role of the organization holding `permissionSlug`. */
  organizationRoleSlug: string;
  /** A permission the organization role holds. */
  permissionSlug: string;
  /** A permission no role holds (for permission adds). */
  sparePermissionSlug: string;
  // --- client surfaces (issue #22, h22/platform) ---
  /** A widget token (all the widgets' scopes) of `userId` in `organizationId`. */
  widgetToken: string;
  /** HTTP as the widgets call: that token as bearer, and their headers. */
  clientHttp: HttpClient;
  // --- directory sync (issue #36) ---
  /** A directory of the organization (made by the operator), a user it pushed, and a group holding that user. */
  directoryId: string;
  directoryUserId: string;
  directoryGroupId: string;
  // --- audit logs (issue #38) ---
  /** A (pending) audit log export of the organization. */
  auditLogExportId: string;
}

/** The HTTP client an operation runs with: the widget token for `auth: 'client'`, else the API key. */
export function httpOf(f: Fixture, op: Pick<Operation, 'auth'>): HttpClient {
  return op.auth === 'client' ? f.clientHttp : f.env.http;
}

/** Every scope the widget routes of the catalogue check (the log stream's too). */
const CATALOG_WIDGET_SCOPES = [...ALL_WIDGET_SCOPES, 'widgets:audit-log-streaming:manage'];

/** A widget token of the user in the organization, with every scope the widgets check. */
export async function widgetTokenOf(env: TestEnvironment, organizationId: string, userId: string): Promise<string> {
  const issued = await created(
    env.http.post('/widgets/token', {
      organization_id: organizationId,
      user_id: userId,
      scopes: CATALOG_WIDGET_SCOPES,
    }),
    'widget token',
  );
  return issued.token;
}

/** A fresh e-mail address (users' e-mails are unique per environment). */
export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID().slice(0, 12)}@example.com`;
}

async function created(res: Promise<{ status: number; text: string; body: any }>, what: string, status = 201) {
  const r = await res;
  if (r.status !== status) throw new Error(`fixture ${what}: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * One of everything in an environment: an organization with a domain, a user and their
 * membership, a group holding the membership, a connection and an agent registration (both
 * through the admin service, which alone creates them), and a webhook endpoint.
 */
export async function makeFixture(
  env: TestEnvironment,
  admin?: Awaited<ReturnType<typeof adminCaller>>,
): Promise<Fixture> {
  const org = await created(
    env.http.post('/organizations', {
      name: 'Fixture',
      domain_data: [{ domain: uniqueDomain('fx'), state: 'pending' }],
    }),
    'organization',
  );
  const userExternalId = `fx-${randomUUID().slice(0, 12)}`;
  const user = await created(
    env.http.post('/user_management/users', { email: uniqueEmail('fx'), external_id: userExternalId }),
    'user',
  );
  const membership = await created(
    env.http.post('/user_management/organization_memberships', { user_id: user.id, organization_id: org.id }),
    'membership',
  );
  const spare = await created(env.http.post('/user_management/users', { email: uniqueEmail('spare') }), 'user');
  const spareMembership = await created(
    env.http.post('/user_management/organization_memberships', { user_id: spare.id, organization_id: org.id }),
    'membership',
  );
  const loner = await created(env.http.post('/user_management/users', { email: uniqueEmail('loner') }), 'user');
  const group = await created(env.http.post(`/organizations/${org.id}/groups`, { name: 'Fixture group' }), 'group');
  await created(
    env.http.post(`/organizations/${org.id}/groups/${group.id}/organization-memberships`, {
      organization_membership_id: membership.id,
    }),
    'group membership',
    200,
  );
  admin ??= await adminCaller();
  const connection = await admin.connections.create({
    environment: env.environmentId,
    organization_id: org.id,
    connection_type: 'OktaSAML',
    name: 'Fixture connection',
  });
  const agent = await admin.agents.register({ environment: env.environmentId, organization_id: org.id });
  const itContact = await created(
    env.http.post(`/organizations/${org.id}/it_contacts`, { email: uniqueEmail('it') }),
    'IT contact',
  );
  const orgKey = await created(
    env.http.post(`/organizations/${org.id}/api_keys`, { name: 'Fixture key', permissions: ['fixture:read'] }),
    'organization API key',
  );
  const endpoint = await created(
    env.http.post('/webhook_endpoints', { endpoint_url: 'https://hooks.example.com/fixture', events: ['*'] }),
    'webhook endpoint',
  );
  const invitation = await created(
    env.http.post('/user_management/invitations', { email: uniqueEmail('invited'), organization_id: org.id }),
    'invitation',
  );
  const token = await created(
    env.http.post('/client/token', { organization_id: org.id, user_id: user.id }),
    'client token',
  );
  const sessionId = JSON.parse(Buffer.from(token.token.split('.')[1], 'base64url').toString()).sid as string;
  // Slugs unique per fixture: a test may make two fixtures in one environment.
  const permissionSlug = `${uniqueSlug('fx')}:read`;
  const sparePermissionSlug = `${uniqueSlug('fx')}:write`;
  const environmentRoleSlug = uniqueSlug('fx-env');
  const organizationRoleSlug = uniqueSlug('org-fx');
  await created(env.http.post('/authorization/permissions', { slug: permissionSlug, name: 'Read' }), 'permission');
  await created(
    env.http.post('/authorization/permissions', { slug: sparePermissionSlug, name: 'Write' }),
    'permission',
  );
  await created(env.http.post('/authorization/roles', { slug: environmentRoleSlug, name: 'Fixture' }), 'role');
  await created(
    env.http.post(`/authorization/organizations/${org.id}/roles`, { slug: organizationRoleSlug, name: 'Fixture' }),
    'organization role',
  );
  await created(
    env.http.post(`/authorization/organizations/${org.id}/roles/${organizationRoleSlug}/permissions`, {
      slug: permissionSlug,
    }),
    'organization role permission',
    200,
  );
  // The audit-log schema rows read the action `document.updated`: it exists once a schema does.
  await created(
    env.http.post('/audit_logs/actions/document.updated/schemas', { targets: [{ type: 'document' }] }),
    'audit log schema',
  );
  const auditLogExport = await created(
    env.http.post('/audit_logs/exports', {
      organization_id: org.id,
      range_start: new Date(Date.now() - 3_600_000).toISOString(),
      range_end: new Date().toISOString(),
    }),
    'audit log export',
  );
  const widgetToken = await widgetTokenOf(env, org.id, user.id);
  const directory = await admin.directories.create({
    environment: env.environmentId,
    organization_id: org.id,
    type: 'okta scim v2.0',
    name: 'Fixture directory',
  });
  const { directoryUserId, directoryGroupId } = await directoryData(env, directory.id);
  return {
    env,
    organizationId: org.id,
    domainId: org.domains[0].id,
    userId: user.id,
    membershipId: membership.id,
    groupId: group.id,
    connectionId: connection.id,
    registrationId: agent.registration_id,
    agentApiKey: agent.api_key,
    webhookEndpointId: endpoint.id,
    clientId: env.clientId,
    spareMembershipId: spareMembership.id,
    spareUserId: loner.id,
    invitationId: invitation.id,
    invitationToken: invitation.token,
    userExternalId,
    sessionId,
    itContactId: itContact.id,
    organizationApiKeyId: orgKey.id,
    organizationApiKey: orgKey.value,
    environmentRoleSlug,
    organizationRoleSlug,
    permissionSlug,
    sparePermissionSlug,
    widgetToken,
    clientHttp: new HttpClient(env.http.baseUrl, { Authorization: `Bearer ${widgetToken}`, ...WIDGET_HEADERS }),
    directoryId: directory.id,
    directoryUserId,
    directoryGroupId,
    auditLogExportId: auditLogExport.id,
  };
}

/** A user and a group (holding the user) in the directory, as the SCIM surface writes them. */
async function directoryData(env: TestEnvironment, directoryId: string) {
  const scope = await scopeOf(env.deps, env.environmentId);
  const [row] = await env.deps.db.select().from(directories).where(eq(directories.id, directoryId));
  if (!row) throw new Error(`fixture directory ${directoryId}`);
  const userName = uniqueEmail('dsync');
  const user = await createDirectoryUser(scope, row, {
    userName,
    externalId: null,
    email: userName,
    firstName: 'Ada',
    lastName: 'Lovelace',
    active: true,
    attributes: { userName },
    customAttributes: {},
  });
  const group = await createDirectoryGroup(
    scope,
    row,
    { displayName: 'Fixture directory group', externalId: null, attributes: {} },
    [user.id],
  );
  return { directoryUserId: user.id, directoryGroupId: group.id };
}

/** Strings that have broken services before: SQL, unicode edge cases, prototype keys, paths. */
export const HOSTILE_STRINGS = [
  "'; drop table organizations; --",
  "' or '1'='1",
  '"); select pg_sleep(10); --',
  '%',
  '_',
  '\\',
  '$1',
  '__proto__',
  'constructor',
  'prototype',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\u202eevil',
  'Z\u0351\u0336\u0489a\u0336l\u0336g\u0336o',
  '𝕒𝕔𝕞𝕖',
  '🏳️‍🌈',
  'аpple.com',
  'xn--pple-43d.com',
  'ACME.COM.',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '<script>alert(1)</script>',
  '{"$gt":""}',
  ' ',
  '',
  'a'.repeat(300),
  '1e309',
  'NaN',
  'null',
  'raw:%',
  'raw:%zz',
  'raw:%E0%A4%A',
  'raw:%00',
  'raw:%C0%AF',
  'raw:%FF%FE',
];

export const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
  { weight: 1, arbitrary: fc.domain() },
);

/** Any JSON value, including the wrong types for every field. */
export const anyJson = fc.oneof(
  hostileString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
);

const metadataArb = fc.oneof(
  fc.dictionary(hostileString, hostileString, { maxKeys: 6 }),
  fc.constant(JSON.parse('{"__proto__":"x","constructor":"y","prototype":"z"}')),
  fc.constant(JSON.parse('{"__proto__":{"polluted":"yes"}}')),
  anyJson,
);

const domainDataArb = fc.oneof(
  fc.array(
    fc.record(
      {
        domain: fc.oneof(hostileString, fc.domain()),
        state: fc.oneof(fc.constantFrom('pending', 'verified'), hostileString),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  ),
  anyJson,
);

/** A REST operation of the catalogue. */
export interface Operation {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path, aimed at the fixture's ids, or at `param` when given (path fuzzing). */
  path: (f: Fixture, param?: string) => string;
  /** Whether the path carries a parameter worth fuzzing. */
  hasParam: boolean;
  /** Body fields and their hostile arbitraries (mixed with valid values). */
  body?: (f: Fixture) => Record<string, fc.Arbitrary<unknown>>;
  /** Query parameters and their hostile arbitraries. */
  query?: Record<string, fc.Arbitrary<string>>;
  /** The query a valid read needs, aimed at the fixture (a list that refuses to run without a filter). */
  readQuery?: (f: Fixture) => string;
  /** A POST that creates a record: counted in this table, used by idempotency and race suites. */
  creates?: {
    table: string;
    validBody: (f: Fixture) => Record<string, unknown>;
    /** The success status (default 201). */
    status?: number;
    /** Run again (after its key expired) it answers the same, adding nothing (an idempotent add). */
    sameWhenRerun?: boolean;
    /** Run again with the same body, it is refused so, adding nothing (the record is unique). */
    rerunRefused?: { status: number; code: string };
  };
  /**
   * `client`: an operation of the client surfaces (`/_widgets/…`); the suites run it with the
   * fixture's widget token (`httpOf`), and the client isolation suite with another organization's.
   * `sso`: it takes an SSO access token from a code exchange, so the suites' API key is a 401.
   */
  auth?: 'client' | 'sso';
  /** A valid body aimed at the fixture's ids (client isolation sends it with another organization's token). */
  sample?: (f: Fixture) => Record<string, unknown>;
}

/**
 * A path segment: percent-encoded (a lone surrogate as the UTF-8 bytes of U+FFFD, as a client
 * would send it), or sent as it is when it starts with `raw:` (malformed escapes).
 */
export function segment(value: string): string {
  if (value.startsWith('raw:')) return value.slice(4);
  return [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}
const p = (param: string | undefined, fallback: string) => segment(param ?? fallback);
const listQuery = {
  limit: fc.oneof(fc.constantFrom('0', '1', '100', '101', '-1', '1.5', 'abc', ''), hostileString),
  order: fc.oneof(fc.constantFrom('asc', 'desc', 'normal', 'ASC'), hostileString),
  after: hostileString,
  before: hostileString,
};

const nameArb = fc.oneof(fc.constant('Ada'), hostileString, anyJson);
const userBody = {
  email: fc.oneof(fc.emailAddress(), hostileString, anyJson),
  email_verified: anyJson,
  first_name: nameArb,
  last_name: nameArb,
  external_id: fc.oneof(hostileString, anyJson),
  metadata: metadataArb,
  password: fc.oneof(hostileString, anyJson),
  name: nameArb,
  locale: fc.oneof(fc.constantFrom('en', 'pt-BR', 'zz-ZZZZZZZZZ', 'en_US'), hostileString, anyJson),
  profile_picture_url: fc.oneof(fc.webUrl(), hostileString, anyJson),
  password_hash: fc.oneof(hostileString, anyJson),
  password_hash_type: fc.oneof(fc.constantFrom('bcrypt', 'scrypt', 'md5'), hostileString, anyJson),
};
const groupBody = {
  name: fc.oneof(fc.constant('Engineers'), hostileString, anyJson),
  description: fc.oneof(fc.constant(null), hostileString, anyJson),
};
const eventNameArb = fc.oneof(
  fc.constantFrom('*', 'organization.created', 'user.updated', 'Organization.Created'),
  hostileString,
);
const webhookBody = {
  endpoint_url: fc.oneof(fc.constant('https://hooks.example.com/x'), fc.webUrl(), hostileString, anyJson),
  events: fc.oneof(fc.array(eventNameArb, { maxLength: 4 }), anyJson),
};

/** A fresh role or permission slug (slugs are unique per environment or organization). */
export function uniqueSlug(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}
const slugArb = fc.oneof(
  fc.constantFrom('editor', 'org-billing', 'Editor', '-x', 'a'.repeat(65)),
  hostileString,
  anyJson,
);
const roleBody = {
  slug: slugArb,
  name: fc.oneof(fc.constant('Editor'), hostileString, anyJson),
  description: fc.oneof(fc.constant(null), hostileString, anyJson),
  resource_type_slug: fc.oneof(fc.constant('organization'), hostileString, anyJson),
};
const permissionsArb = (f: Fixture) =>
  fc.oneof(
    fc.array(fc.oneof(fc.constantFrom(f.permissionSlug, f.sparePermissionSlug), hostileString), { maxLength: 4 }),
    anyJson,
  );

export const OPERATIONS: Operation[] = [
  {
    name: 'list organizations',
    method: 'GET',
    path: () => '/organizations',
    hasParam: false,
    query: { ...listQuery, domains: fc.oneof(hostileString, fc.domain()), 'domains[]': hostileString },
  },
  {
    name: 'get organization',
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}`,
    hasParam: true,
  },
  {
    name: 'get organization by external id',
    method: 'GET',
    path: (_f, param) => `/organizations/external_id/${p(param, 'ext-1')}`,
    hasParam: true,
  },
  {
    name: 'create organization',
    method: 'POST',
    path: () => '/organizations',
    hasParam: false,
    body: () => ({
      name: fc.oneof(fc.constant('Acme'), hostileString, anyJson),
      domain_data: domainDataArb,
      external_id: fc.oneof(hostileString, anyJson),
      metadata: metadataArb,
      allow_profiles_outside_organization: anyJson,
    }),
    creates: { table: 'organizations', validBody: () => ({ name: 'Idempotent Inc' }) },
  },
  {
    name: 'update organization',
    method: 'PUT',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}`,
    hasParam: true,
    body: () => ({
      name: fc.oneof(hostileString, anyJson),
      domain_data: domainDataArb,
      external_id: fc.oneof(hostileString, anyJson),
      metadata: metadataArb,
      billing_customer_id: fc.oneof(hostileString, anyJson),
      stripe_customer_id: fc.oneof(hostileString, anyJson),
      allow_profiles_outside_organization: anyJson,
    }),
  },
  {
    name: 'delete organization',
    method: 'DELETE',
    path: (f, param) => `/organizations/${p(param, `${f.organizationId}x`)}`,
    hasParam: true,
  },
  {
    name: 'get organization domain',
    method: 'GET',
    path: (f, param) => `/organization_domains/${p(param, f.domainId)}`,
    hasParam: true,
  },
  {
    name: 'create organization domain',
    method: 'POST',
    path: () => '/organization_domains',
    hasParam: false,
    body: (f) => ({
      domain: fc.oneof(hostileString, fc.domain(), anyJson),
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
    }),
    creates: {
      table: 'organization_domains',
      validBody: (f) => ({ organization_id: f.organizationId, domain: uniqueDomain('idem') }),
      rerunRefused: { status: 409, code: 'domain_already_exists' },
    },
  },
  {
    name: 'verify organization domain',
    method: 'POST',
    path: (f, param) => `/organization_domains/${p(param, f.domainId)}/verify`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'delete organization domain',
    method: 'DELETE',
    path: (f, param) => `/organization_domains/${p(param, `${f.domainId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list users',
    method: 'GET',
    path: () => '/user_management/users',
    hasParam: false,
    query: { ...listQuery, email: fc.oneof(hostileString, fc.emailAddress()), organization_id: hostileString },
  },
  {
    name: 'get user',
    method: 'GET',
    path: (f, param) => `/user_management/users/${p(param, f.userId)}`,
    hasParam: true,
  },
  {
    name: 'get user by external id',
    method: 'GET',
    path: (f, param) => `/user_management/users/external_id/${p(param, f.userExternalId)}`,
    hasParam: true,
  },
  {
    name: "list a user's sessions",
    method: 'GET',
    path: (f, param) => `/user_management/users/${p(param, f.userId)}/sessions`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'revoke session',
    method: 'POST',
    path: () => '/user_management/sessions/revoke',
    hasParam: false,
    body: (f) => ({ session_id: fc.oneof(fc.constant(f.sessionId), hostileString, anyJson) }),
  },
  {
    name: 'create user',
    method: 'POST',
    path: () => '/user_management/users',
    hasParam: false,
    body: () => userBody,
    creates: {
      table: 'users',
      validBody: () => ({ email: uniqueEmail('idem'), first_name: 'Ida' }),
      rerunRefused: { status: 409, code: 'email_not_available' },
    },
  },
  {
    name: 'update user',
    method: 'PUT',
    path: (f, param) => `/user_management/users/${p(param, f.userId)}`,
    hasParam: true,
    body: () => userBody,
  },
  {
    name: 'delete user',
    method: 'DELETE',
    path: (f, param) => `/user_management/users/${p(param, `${f.userId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list organization memberships',
    method: 'GET',
    path: () => '/user_management/organization_memberships',
    hasParam: false,
    query: {
      ...listQuery,
      user_id: hostileString,
      organization_id: hostileString,
      statuses: fc.oneof(fc.constantFrom('active', 'inactive,pending', 'active,,', 'ACTIVE'), hostileString),
      'statuses[]': hostileString,
    },
  },
  {
    name: 'get organization membership',
    method: 'GET',
    path: (f, param) => `/user_management/organization_memberships/${p(param, f.membershipId)}`,
    hasParam: true,
  },
  {
    name: 'create organization membership',
    method: 'POST',
    path: () => '/user_management/organization_memberships',
    hasParam: false,
    body: (f) => ({
      user_id: fc.oneof(fc.constant(f.spareUserId), fc.constant(f.userId), hostileString, anyJson),
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      role_slug: fc.oneof(fc.constantFrom('admin', 'member'), hostileString, anyJson),
      role_slugs: fc.oneof(fc.array(fc.oneof(fc.constant('admin'), hostileString), { maxLength: 3 }), anyJson),
    }),
    creates: {
      table: 'organization_memberships',
      validBody: (f) => ({ user_id: f.spareUserId, organization_id: f.organizationId }),
      rerunRefused: { status: 409, code: 'organization_membership_already_exists' },
    },
  },
  {
    name: "change an organization membership's roles",
    method: 'PUT',
    path: (f, param) => `/user_management/organization_memberships/${p(param, f.membershipId)}`,
    hasParam: true,
    body: (f) => ({
      role_slug: fc.oneof(fc.constantFrom('admin', 'member', f.organizationRoleSlug), hostileString, anyJson),
      role_slugs: fc.oneof(fc.array(fc.oneof(fc.constant('admin'), hostileString), { maxLength: 3 }), anyJson),
    }),
  },
  {
    name: 'deactivate organization membership',
    method: 'PUT',
    path: (f, param) => `/user_management/organization_memberships/${p(param, f.membershipId)}/deactivate`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'reactivate organization membership',
    method: 'PUT',
    path: (f, param) => `/user_management/organization_memberships/${p(param, f.membershipId)}/reactivate`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'delete organization membership',
    method: 'DELETE',
    path: (f, param) => `/user_management/organization_memberships/${p(param, `${f.membershipId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list invitations',
    method: 'GET',
    path: () => '/user_management/invitations',
    hasParam: false,
    query: { ...listQuery, organization_id: hostileString, email: fc.oneof(hostileString, fc.emailAddress()) },
  },
  {
    name: 'get invitation',
    method: 'GET',
    path: (f, param) => `/user_management/invitations/${p(param, f.invitationId)}`,
    hasParam: true,
  },
  {
    name: 'find invitation by token',
    method: 'GET',
    path: (f, param) => `/user_management/invitations/by_token/${p(param, f.invitationToken)}`,
    hasParam: true,
  },
  {
    name: 'send invitation',
    method: 'POST',
    path: () => '/user_management/invitations',
    hasParam: false,
    body: (f) => ({
      email: fc.oneof(fc.emailAddress(), hostileString, anyJson),
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      inviter_user_id: fc.oneof(fc.constant(f.userId), hostileString, anyJson),
      role_slug: fc.oneof(fc.constantFrom('member', 'admin'), hostileString, anyJson),
      expires_in_days: fc.oneof(fc.integer({ min: -5, max: 40 }), hostileString, anyJson),
      locale: fc.oneof(fc.constant('en'), hostileString, anyJson),
    }),
    creates: {
      table: 'invitations',
      validBody: (f) => ({ email: uniqueEmail('idem'), organization_id: f.organizationId }),
      rerunRefused: { status: 409, code: 'invitation_already_exists' },
    },
  },
  {
    name: 'accept invitation',
    method: 'POST',
    path: (f, param) => `/user_management/invitations/${p(param, `${f.invitationId}x`)}/accept`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'revoke invitation',
    method: 'POST',
    path: (f, param) => `/user_management/invitations/${p(param, `${f.invitationId}x`)}/revoke`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'resend invitation',
    method: 'POST',
    path: (f, param) => `/user_management/invitations/${p(param, f.invitationId)}/resend`,
    hasParam: true,
    body: () => ({ locale: fc.oneof(fc.constant('en'), hostileString, anyJson) }),
  },
  {
    name: "list an organization membership's groups",
    method: 'GET',
    path: (f, param) => `/user_management/organization_memberships/${p(param, f.membershipId)}/groups`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: "list an organization's groups",
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/groups`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'create group',
    method: 'POST',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/groups`,
    hasParam: true,
    body: () => groupBody,
    creates: { table: 'groups', validBody: () => ({ name: 'Idempotent group', description: 'once' }) },
  },
  {
    name: 'get group',
    method: 'GET',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/groups/${p(param, f.groupId)}`,
    hasParam: true,
  },
  {
    name: 'update group',
    method: 'PATCH',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/groups/${p(param, f.groupId)}`,
    hasParam: true,
    body: () => groupBody,
  },
  {
    name: 'delete group',
    method: 'DELETE',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/groups/${p(param, `${f.groupId}x`)}`,
    hasParam: true,
  },
  {
    name: "list a group's memberships",
    method: 'GET',
    path: (f, param) =>
      `/organizations/${segment(f.organizationId)}/groups/${p(param, f.groupId)}/organization-memberships`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'add a membership to a group',
    method: 'POST',
    path: (f, param) =>
      `/organizations/${segment(f.organizationId)}/groups/${p(param, f.groupId)}/organization-memberships`,
    hasParam: true,
    body: (f) => ({
      organization_membership_id: fc.oneof(
        fc.constant(f.spareMembershipId),
        fc.constant(f.membershipId),
        hostileString,
        anyJson,
      ),
    }),
    creates: {
      table: 'group_memberships',
      validBody: (f) => ({ organization_membership_id: f.spareMembershipId }),
      status: 200,
      sameWhenRerun: true,
    },
  },
  {
    name: 'remove a membership from a group',
    method: 'DELETE',
    path: (f, param) =>
      `/organizations/${segment(f.organizationId)}/groups/${segment(f.groupId)}/organization-memberships/${p(param, `${f.membershipId}x`)}`,
    hasParam: true,
  },
  {
    name: 'create client token',
    method: 'POST',
    path: () => '/client/token',
    hasParam: false,
    body: (f) => ({
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      user_id: fc.oneof(fc.constant(f.userId), fc.constant(f.spareUserId), hostileString, anyJson),
    }),
    creates: { table: 'sessions', validBody: (f) => ({ organization_id: f.organizationId, user_id: f.userId }) },
  },
  {
    name: 'create widget token',
    method: 'POST',
    path: () => '/widgets/token',
    hasParam: false,
    body: (f) => ({
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      user_id: fc.oneof(fc.constant(f.userId), fc.constant(f.spareUserId), hostileString, anyJson),
      scopes: fc.oneof(fc.constant(['widgets:users-table:manage']), fc.array(hostileString), anyJson),
    }),
    // Creates no record: a widget token is no session (issue #34), so nothing to count or replay.
  },
  // The client surfaces (`/_widgets/…`): `auth: 'client'` runs them with the fixture's widget token
  // (fuzz, isolation by organization); a row per operation, like any other. A path parameter
  // names the fixture's resource (e.g. `f.userId`), so the isolation suite aims it at another
  // organization; a write gives `sample` (a valid body with the fixture's ids).
  {
    name: 'widgets: list the caller organizations',
    method: 'GET',
    path: () => '/_widgets/UserManagement/organizations',
    hasParam: false,
    auth: 'client',
  },
  // h22/self: the caller's sessions, profile and settings (tests/src/client-api/{sessions,profile,organization}).
  {
    name: 'widgets: list the caller sessions',
    method: 'GET',
    path: () => '/_widgets/UserProfile/sessions',
    auth: 'client',
    hasParam: false,
  },
  {
    name: 'widgets: revoke one of the caller sessions',
    method: 'DELETE',
    path: (f, param) => `/_widgets/UserProfile/sessions/revoke/${p(param, f.sessionId)}`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'widgets: revoke all the caller sessions but one',
    method: 'DELETE',
    path: () => '/_widgets/UserProfile/sessions/revoke-all',
    auth: 'client',
    hasParam: false,
    body: (f) => ({ currentSessionId: fc.oneof(fc.constant(f.sessionId), hostileString, anyJson) }),
  },
  {
    name: 'widgets: get the caller',
    method: 'GET',
    path: () => '/_widgets/UserProfile/me',
    hasParam: false,
    auth: 'client',
  },
  {
    name: 'widgets: update the caller',
    method: 'POST',
    path: () => '/_widgets/UserProfile/me',
    auth: 'client',
    hasParam: false,
    body: () => ({
      firstName: fc.oneof(fc.constant('Grace'), fc.constant(''), hostileString, anyJson),
      lastName: fc.oneof(fc.constant('Hopper'), hostileString, anyJson),
      locale: fc.oneof(fc.constantFrom('en', 'pt-BR', 'not a locale', ''), hostileString, anyJson),
    }),
  },
  { name: 'widgets: settings', method: 'GET', path: () => '/_widgets/settings', hasParam: false, auth: 'client' },
  {
    name: 'widgets: the caller sign-in methods',
    method: 'GET',
    path: () => '/_widgets/UserProfile/authentication-information',
    hasParam: false,
    auth: 'client',
  },
  {
    name: 'widgets: mail a code to the caller',
    method: 'POST',
    path: () => '/_widgets/UserProfile/send-verification',
    hasParam: false,
    auth: 'client',
    body: () => ({ extra: fc.oneof(hostileString, anyJson) }),
  },
  {
    name: 'widgets: check the caller code',
    method: 'POST',
    path: () => '/_widgets/UserProfile/verify',
    hasParam: false,
    auth: 'client',
    body: () => ({
      code: fc.oneof(fc.constant('123456'), hostileString, anyJson),
      authenticationChallengeId: fc.oneof(
        fc.constant('auth_challenge_01J000000000000000000000000'),
        hostileString,
        anyJson,
      ),
    }),
  },
  {
    name: 'widgets: mail a code to a new address',
    method: 'POST',
    path: () => '/_widgets/UserProfile/send-email-change',
    hasParam: false,
    auth: 'client',
    body: () => ({ newEmail: fc.oneof(fc.constant('new@example.com'), hostileString, anyJson) }),
  },
  {
    name: 'widgets: change to the new address',
    method: 'POST',
    path: () => '/_widgets/UserProfile/verify-email-change',
    hasParam: false,
    auth: 'client',
    body: () => ({ code: fc.oneof(fc.constant('123456'), hostileString, anyJson) }),
  },
  {
    name: 'widgets: change the caller password',
    method: 'POST',
    path: () => '/_widgets/UserProfile/update-password',
    hasParam: false,
    auth: 'client',
    body: () => ({
      currentPassword: fc.oneof(fc.constant('correct horse battery'), hostileString, anyJson),
      newPassword: fc.oneof(fc.constant('a brand new one'), hostileString, anyJson),
    }),
  },
  {
    name: 'widgets: set a first password',
    method: 'POST',
    path: () => '/_widgets/UserProfile/create-password',
    hasParam: false,
    auth: 'client',
    body: () => ({ password: fc.oneof(fc.constant('correct horse battery'), hostileString, anyJson) }),
  },
  // end h22/self
  // h22/domains: the domain verification and SSO widgets' routes (403 with an API key; with client
  // tokens in tests/src/client-api/{domains,sso}.http.test.ts).
  {
    name: 'widgets: list the organization domains',
    method: 'GET',
    path: () => '/_widgets/admin-portal/organization-domains',
    auth: 'client',
    hasParam: false,
  },
  {
    name: 'widgets: delete an organization domain',
    method: 'DELETE',
    path: (f, param) => `/_widgets/admin-portal/organization-domains/${p(param, f.domainId)}`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'widgets: restart verification of a failed domain',
    method: 'POST',
    path: (f, param) => `/_widgets/admin-portal/organization-domains/${p(param, f.domainId)}/reverify`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'widgets: list the SSO connections',
    method: 'GET',
    path: () => '/_widgets/admin-portal/sso-connections',
    auth: 'client',
    hasParam: false,
  },
  // AdminPortalAuditLogStreaming (issue #38): `{}` or the organization's stream.
  {
    name: 'widgets: the audit log stream',
    method: 'GET',
    path: () => '/_widgets/admin-portal/audit-log-stream',
    auth: 'client',
    hasParam: false,
  },
  // Admin portal (issue #23): links from an API key; the widgets' own link route answers an API key 403.
  {
    name: 'generate admin portal link',
    method: 'POST',
    path: () => '/portal/generate_link',
    hasParam: false,
    body: (f) => ({
      organization: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      intent: fc.oneof(
        fc.constantFrom('domain_verification', 'sso', 'dsync', 'log_streams', 'audit_logs'),
        hostileString,
        anyJson,
      ),
      return_url: fc.oneof(
        fc.constant('https://app.example.com/'),
        fc.constant('javascript:x'),
        hostileString,
        anyJson,
      ),
      success_url: fc.oneof(fc.constant('http://127.0.0.1:9/done'), hostileString, anyJson),
      admin_emails: fc.oneof(fc.constant(['it@example.com']), fc.array(hostileString), anyJson),
    }),
    creates: {
      table: 'portal_links',
      validBody: (f) => ({ organization: f.organizationId, intent: 'domain_verification' }),
    },
  },
  {
    name: 'widgets: admin portal link',
    method: 'POST',
    path: () => '/_widgets/admin-portal/generate-link',
    auth: 'client',
    hasParam: false,
  },
  // DirectorySync (issue #36), run with the fixture's widget token.
  {
    name: 'widgets: list the directories',
    method: 'GET',
    path: () => '/_widgets/directory-sync/directories',
    auth: 'client',
    hasParam: false,
  },
  {
    name: 'widgets: get a directory',
    method: 'GET',
    path: (f, param) => `/_widgets/directory-sync/directories/${p(param, f.directoryId)}`,
    auth: 'client',
    hasParam: true,
  },
  // ApiKeys and UserApiKeys (issue #38), run with the fixture's widget token.
  {
    name: 'widgets: list the organization API keys',
    method: 'GET',
    path: () => '/_widgets/ApiKeys/organization-api-keys',
    auth: 'client',
    hasParam: false,
    query: { ...listQuery, search: hostileString },
  },
  {
    name: 'widgets: create an organization API key',
    method: 'POST',
    path: () => '/_widgets/ApiKeys/organization-api-keys',
    auth: 'client',
    hasParam: false,
    body: () => ({
      name: fc.oneof(fc.constant('Widget key'), hostileString, anyJson),
      permissions: fc.oneof(fc.constant([]), fc.array(hostileString, { maxLength: 4 }), anyJson),
      expiresAt: fc.oneof(fc.constant(null), hostileString, anyJson),
    }),
  },
  {
    name: 'widgets: the permissions an API key may be given',
    method: 'GET',
    path: () => '/_widgets/ApiKeys/permissions',
    auth: 'client',
    hasParam: false,
    query: { ...listQuery, search: hostileString },
  },
  {
    name: 'widgets: expire an organization API key',
    method: 'POST',
    path: (f, param) => `/_widgets/ApiKeys/${p(param, f.organizationApiKeyId)}/expire`,
    auth: 'client',
    hasParam: true,
    body: () => ({ expiresAt: fc.oneof(fc.constant(null), hostileString, anyJson) }),
  },
  {
    name: 'widgets: revoke an organization API key',
    method: 'DELETE',
    path: (f, param) => `/_widgets/ApiKeys/${p(param, f.organizationApiKeyId)}`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: "widgets: list the members' API keys",
    method: 'GET',
    path: () => '/_widgets/UserApiKeys/api-keys',
    auth: 'client',
    hasParam: false,
    query: { ...listQuery, search: hostileString },
  },
  {
    name: 'widgets: create an API key of the caller',
    method: 'POST',
    path: () => '/_widgets/UserApiKeys/api-keys',
    auth: 'client',
    hasParam: false,
    body: () => ({
      name: fc.oneof(fc.constant('My key'), hostileString, anyJson),
      permissions: fc.oneof(fc.constant([]), fc.array(hostileString, { maxLength: 4 }), anyJson),
      expiresAt: fc.oneof(fc.constant(null), hostileString, anyJson),
    }),
  },
  {
    name: "widgets: the caller's permissions for a key",
    method: 'GET',
    path: () => '/_widgets/UserApiKeys/permissions',
    auth: 'client',
    hasParam: false,
    query: { ...listQuery, search: hostileString },
  },
  {
    name: 'widgets: expire a user API key',
    method: 'POST',
    path: (f, param) => `/_widgets/UserApiKeys/${p(param, f.organizationApiKeyId)}/expire`,
    auth: 'client',
    hasParam: true,
    body: () => ({ expiresAt: fc.oneof(fc.constant(null), hostileString, anyJson) }),
  },
  {
    name: 'widgets: revoke a user API key',
    method: 'DELETE',
    path: (f, param) => `/_widgets/UserApiKeys/${p(param, f.organizationApiKeyId)}`,
    auth: 'client',
    hasParam: true,
  },
  // UsersManagement (rows 1-8), run with the fixture's widget token.
  {
    name: 'widgets: list members',
    method: 'GET',
    path: () => '/_widgets/UserManagement/members',
    auth: 'client',
    hasParam: false,
    query: { ...listQuery, role: hostileString, search: hostileString },
  },
  {
    name: 'widgets: roles and config',
    method: 'GET',
    path: () => '/_widgets/UserManagement/roles-and-config',
    auth: 'client',
    hasParam: false,
  },
  {
    name: 'widgets: roles',
    method: 'GET',
    path: () => '/_widgets/UserManagement/roles',
    auth: 'client',
    hasParam: false,
  },
  {
    name: 'widgets: invite a user',
    method: 'POST',
    path: () => '/_widgets/UserManagement/invite-user',
    auth: 'client',
    hasParam: false,
    body: () => ({
      email: fc.oneof(fc.constant(uniqueEmail('widget')), hostileString, anyJson),
      roles: fc.oneof(fc.constant(['member']), fc.array(hostileString), anyJson),
    }),
  },
  {
    name: "widgets: change a member's roles",
    method: 'POST',
    path: (f, param) => `/_widgets/UserManagement/members/${p(param, f.userId)}`,
    auth: 'client',
    sample: () => ({ roles: ['member'] }),
    hasParam: true,
    body: () => ({ roles: fc.oneof(fc.constant(['admin']), fc.array(hostileString), anyJson) }),
  },
  {
    name: 'widgets: remove a member',
    method: 'DELETE',
    path: (f, param) => `/_widgets/UserManagement/members/${p(param, f.userId)}`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'widgets: revoke an invitation',
    method: 'DELETE',
    path: (f, param) => `/_widgets/UserManagement/invites/${p(param, f.invitationId)}`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'widgets: resend an invitation',
    method: 'POST',
    path: (f, param) => `/_widgets/UserManagement/invites/${p(param, f.invitationId)}/resend`,
    auth: 'client',
    hasParam: true,
  },
  {
    name: 'validate agent credential',
    method: 'POST',
    path: () => '/agents/credentials/validate',
    hasParam: false,
    body: (f) => ({
      type: fc.oneof(fc.constantFrom('access_token', 'api_key'), hostileString, anyJson),
      credential: fc.oneof(fc.constant(f.agentApiKey), hostileString, anyJson),
      audience: fc.oneof(hostileString, anyJson),
    }),
  },
  {
    name: 'get agent registration',
    method: 'GET',
    path: (f, param) => `/agents/registrations/${p(param, f.registrationId)}`,
    hasParam: true,
  },
  {
    name: 'get JWKS',
    method: 'GET',
    path: (f, param) => `/sso/jwks/${p(param, f.clientId)}`,
    hasParam: true,
  },
  // Audit logs (issue #38). An event is append-only and not unique (a retry without its
  // Idempotency-Key records another), so the create is exercised by tests/src/audit-logs, not as
  // a `creates` row here; these rows bring the fuzz, dispatch and isolation suites.
  {
    name: 'create audit log event',
    method: 'POST',
    path: () => '/audit_logs/events',
    hasParam: false,
    body: (f) => ({
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      event: fc.oneof(
        fc.constant({
          action: 'user.signed_in',
          occurred_at: new Date().toISOString(),
          actor: { type: 'user', id: 'user_1' },
          targets: [{ type: 'team', id: 'team_1' }],
          context: { location: '203.0.113.7' },
        }),
        anyJson,
        hostileString,
      ),
    }),
  },
  {
    name: 'list audit log actions',
    method: 'GET',
    path: () => '/audit_logs/actions',
    hasParam: false,
    query: listQuery,
  },
  {
    name: 'create audit log schema',
    method: 'POST',
    path: (_f, param) => `/audit_logs/actions/${p(param, 'document.updated')}/schemas`,
    hasParam: true,
    body: () => ({
      targets: fc.oneof(fc.constant([{ type: 'document' }]), anyJson, hostileString),
      actor: anyJson,
      metadata: anyJson,
    }),
  },
  {
    name: 'list audit log schemas',
    method: 'GET',
    path: (_f, param) => `/audit_logs/actions/${p(param, 'document.updated')}/schemas`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'get audit log retention',
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/audit_logs_retention`,
    hasParam: true,
  },
  {
    name: 'set audit log retention',
    method: 'PUT',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/audit_logs_retention`,
    hasParam: true,
    body: () => ({
      retention_period_in_days: fc.oneof(fc.constantFrom(30, 365, 31, 0, -1, 4000), hostileString, anyJson),
    }),
  },
  {
    name: 'create audit log export',
    method: 'POST',
    path: () => '/audit_logs/exports',
    hasParam: false,
    body: (f) => ({
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      range_start: fc.oneof(fc.constant(new Date(Date.now() - 3_600_000).toISOString()), hostileString, anyJson),
      range_end: fc.oneof(fc.constant(new Date().toISOString()), hostileString, anyJson),
      actions: fc.oneof(fc.constant(['user.signed_in']), anyJson, hostileString),
      actor_ids: anyJson,
      targets: anyJson,
    }),
  },
  {
    name: 'get audit log export',
    method: 'GET',
    path: (f, param) => `/audit_logs/exports/${p(param, f.auditLogExportId)}`,
    hasParam: true,
  },
  {
    name: 'get audit log configuration',
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/audit_log_configuration`,
    hasParam: true,
  },
  // Single sign-on (issue #37): the REST operations; the browser's steps are the SSO codec's
  // (tests/src/sso/http.test.ts). `GET /sso/profile` takes an SSO access token, so an API key is 401.
  {
    name: 'create redirect URI',
    method: 'POST',
    path: () => '/user_management/redirect_uris',
    hasParam: false,
    body: () => ({
      uri: fc.oneof(
        fc.constantFrom('https://app.example.com/cb', 'http://localhost/cb', 'http://x.com/'),
        hostileString,
        anyJson,
      ),
      default: anyJson,
    }),
    creates: {
      table: 'redirect_uris',
      validBody: () => ({ uri: `https://app.example.com/${randomUUID()}` }),
      rerunRefused: { status: 409, code: 'redirect_uri_already_exists' },
    },
  },
  {
    name: 'get SSO profile',
    method: 'GET',
    path: () => '/sso/profile',
    hasParam: false,
    auth: 'sso',
  },
  {
    name: 'authorize SSO logout',
    method: 'POST',
    path: () => '/sso/logout/authorize',
    hasParam: false,
    body: () => ({ profile_id: fc.oneof(fc.constant('prof_01NOPE'), hostileString, anyJson) }),
  },
  {
    name: 'list connections',
    method: 'GET',
    path: () => '/connections',
    hasParam: false,
    query: {
      ...listQuery,
      organization_id: hostileString,
      connection_type: fc.oneof(fc.constantFrom('OktaSAML', 'GoogleOAuth', 'oktasaml'), hostileString),
    },
  },
  {
    name: 'get connection',
    method: 'GET',
    path: (f, param) => `/connections/${p(param, f.connectionId)}`,
    hasParam: true,
  },
  {
    name: 'delete connection',
    method: 'DELETE',
    path: (f, param) => `/connections/${p(param, `${f.connectionId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list directories',
    method: 'GET',
    path: () => '/directories',
    hasParam: false,
    query: { ...listQuery, organization_id: hostileString, search: hostileString, domain: hostileString },
  },
  {
    name: 'get directory',
    method: 'GET',
    path: (f, param) => `/directories/${p(param, f.directoryId)}`,
    hasParam: true,
  },
  {
    name: 'delete directory',
    method: 'DELETE',
    path: (f, param) => `/directories/${p(param, `${f.directoryId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list directory users',
    method: 'GET',
    path: () => '/directory_users',
    hasParam: false,
    query: { ...listQuery, directory: hostileString, group: hostileString },
    readQuery: (f) => `directory=${f.directoryId}`,
  },
  {
    name: 'get directory user',
    method: 'GET',
    path: (f, param) => `/directory_users/${p(param, f.directoryUserId)}`,
    hasParam: true,
  },
  {
    name: 'list directory groups',
    method: 'GET',
    path: () => '/directory_groups',
    hasParam: false,
    query: { ...listQuery, directory: hostileString, user: hostileString },
    readQuery: (f) => `user=${f.directoryUserId}`,
  },
  {
    name: 'get directory group',
    method: 'GET',
    path: (f, param) => `/directory_groups/${p(param, f.directoryGroupId)}`,
    hasParam: true,
  },
  {
    name: "list an organization's IT contacts",
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/it_contacts`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'create IT contact',
    method: 'POST',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/it_contacts`,
    hasParam: true,
    body: () => ({ email: fc.oneof(fc.emailAddress(), hostileString, anyJson) }),
    creates: {
      table: 'it_contacts',
      validBody: () => ({ email: 'idempotent-it@example.com' }),
      rerunRefused: { status: 409, code: 'it_contact_already_exists' },
    },
  },
  {
    name: 'delete IT contact',
    method: 'DELETE',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/it_contacts/${p(param, `${f.itContactId}x`)}`,
    hasParam: true,
  },
  {
    name: 'invite IT contact',
    method: 'POST',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/it_contacts/${p(param, f.itContactId)}/invite`,
    hasParam: true,
    body: () => ({
      intents: fc.oneof(
        fc.array(fc.oneof(fc.constantFrom('sso', 'directory_sync', 'log_streams', 'SSO'), hostileString), {
          maxLength: 6,
        }),
        anyJson,
      ),
    }),
  },
  {
    name: 'revoke IT contact invitation',
    method: 'POST',
    path: (f, param) => `/organizations/${segment(f.organizationId)}/it_contacts/${p(param, f.itContactId)}/revoke`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: "list an organization's API keys",
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/api_keys`,
    hasParam: true,
    query: listQuery,
  },
  {
    name: 'create organization API key',
    method: 'POST',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}/api_keys`,
    hasParam: true,
    body: () => ({
      name: fc.oneof(fc.constant('CI'), hostileString, anyJson),
      permissions: fc.oneof(fc.array(fc.oneof(fc.constant('posts:read'), hostileString), { maxLength: 4 }), anyJson),
    }),
    creates: { table: 'organization_api_keys', validBody: () => ({ name: 'Idempotent key', permissions: ['a:b'] }) },
  },
  {
    name: 'delete API key',
    method: 'DELETE',
    path: (f, param) => `/api_keys/${p(param, `${f.organizationApiKeyId}x`)}`,
    hasParam: true,
  },
  {
    name: 'validate API key',
    method: 'POST',
    path: () => '/api_keys/validations',
    hasParam: false,
    body: (f) => ({ value: fc.oneof(fc.constant(f.organizationApiKey), hostileString, anyJson) }),
  },
  // User API keys (issue #38): the fixture's user is a member of its organization.
  {
    name: "list a user's API keys",
    method: 'GET',
    path: (f, param) => `/user_management/users/${p(param, f.userId)}/api_keys`,
    hasParam: true,
    query: { ...listQuery, organization_id: hostileString },
  },
  {
    name: 'create user API key',
    method: 'POST',
    path: (f, param) => `/user_management/users/${p(param, f.userId)}/api_keys`,
    hasParam: true,
    body: (f) => ({
      name: fc.oneof(fc.constant('CLI'), hostileString, anyJson),
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
      permissions: fc.oneof(fc.constant([]), fc.array(hostileString, { maxLength: 4 }), anyJson),
    }),
    creates: {
      table: 'organization_api_keys',
      validBody: (f) => ({ name: 'Idempotent user key', organization_id: f.organizationId }),
    },
  },
  {
    name: 'list events',
    method: 'GET',
    path: () => '/events',
    hasParam: false,
    query: {
      ...listQuery,
      events: fc.oneof(fc.constantFrom('organization.created', 'user.created,group.updated', '*'), hostileString),
      'events[]': hostileString,
      organization_id: hostileString,
      range_start: fc.oneof(fc.constantFrom('2026-01-01T00:00:00Z', '0', '-1', '9999-99-99'), hostileString),
      range_end: fc.oneof(fc.constantFrom('2100-01-01T00:00:00.000Z', 'now'), hostileString),
    },
  },
  {
    name: 'list webhook endpoints',
    method: 'GET',
    path: () => '/webhook_endpoints',
    hasParam: false,
    query: listQuery,
  },
  {
    name: 'get webhook endpoint',
    method: 'GET',
    path: (f, param) => `/webhook_endpoints/${p(param, f.webhookEndpointId)}`,
    hasParam: true,
  },
  {
    name: 'create webhook endpoint',
    method: 'POST',
    path: () => '/webhook_endpoints',
    hasParam: false,
    body: () => webhookBody,
    creates: {
      table: 'webhook_endpoints',
      validBody: () => ({ endpoint_url: 'https://hooks.example.com/idempotent', events: ['organization.created'] }),
    },
  },
  {
    name: 'update webhook endpoint',
    method: 'PATCH',
    path: (f, param) => `/webhook_endpoints/${p(param, f.webhookEndpointId)}`,
    hasParam: true,
    body: () => ({ ...webhookBody, status: fc.oneof(fc.constantFrom('enabled', 'disabled'), hostileString, anyJson) }),
  },
  {
    name: 'delete webhook endpoint',
    method: 'DELETE',
    path: (f, param) => `/webhook_endpoints/${p(param, `${f.webhookEndpointId}x`)}`,
    hasParam: true,
  },
  {
    name: 'list environment roles',
    method: 'GET',
    path: () => '/authorization/roles',
    hasParam: false,
  },
  {
    name: 'create environment role',
    method: 'POST',
    path: () => '/authorization/roles',
    hasParam: false,
    body: () => roleBody,
    creates: {
      table: 'roles',
      validBody: () => ({ slug: uniqueSlug('idem'), name: 'Idempotent role' }),
      rerunRefused: { status: 409, code: 'role_slug_conflict' },
    },
  },
  {
    name: 'get environment role',
    method: 'GET',
    path: (f, param) => `/authorization/roles/${p(param, f.environmentRoleSlug)}`,
    hasParam: true,
  },
  {
    name: 'update environment role',
    method: 'PATCH',
    path: (f, param) => `/authorization/roles/${p(param, f.environmentRoleSlug)}`,
    hasParam: true,
    body: () => ({ name: roleBody.name, description: roleBody.description }),
  },
  {
    name: 'delete environment role',
    method: 'DELETE',
    path: (f, param) => `/authorization/roles/${p(param, `${f.environmentRoleSlug}x`)}`,
    hasParam: true,
  },
  {
    name: "replace an environment role's permissions",
    method: 'PUT',
    path: (f, param) => `/authorization/roles/${p(param, f.environmentRoleSlug)}/permissions`,
    hasParam: true,
    body: (f) => ({ permissions: permissionsArb(f) }),
  },
  {
    name: 'add a permission to an environment role',
    method: 'POST',
    path: (f, param) => `/authorization/roles/${p(param, f.environmentRoleSlug)}/permissions`,
    hasParam: true,
    body: (f) => ({ slug: fc.oneof(fc.constant(f.sparePermissionSlug), hostileString, anyJson) }),
    creates: {
      table: 'role_permissions',
      validBody: (f) => ({ slug: f.sparePermissionSlug }),
      status: 200,
      sameWhenRerun: true,
    },
  },
  {
    name: 'get the default role',
    method: 'GET',
    path: () => '/authorization/default_role',
    hasParam: false,
  },
  {
    name: 'set the default role',
    method: 'PUT',
    path: () => '/authorization/default_role',
    hasParam: false,
    body: () => ({ slug: fc.oneof(fc.constantFrom('member', 'admin'), hostileString, anyJson) }),
  },
  {
    name: "list an organization's roles",
    method: 'GET',
    path: (f, param) => `/authorization/organizations/${p(param, f.organizationId)}/roles`,
    hasParam: true,
  },
  {
    name: 'create organization role',
    method: 'POST',
    path: (f, param) => `/authorization/organizations/${p(param, f.organizationId)}/roles`,
    hasParam: true,
    body: () => roleBody,
    creates: {
      table: 'roles',
      validBody: () => ({ slug: uniqueSlug('org-idem'), name: 'Idempotent org role' }),
      rerunRefused: { status: 409, code: 'organization_role_slug_conflict' },
    },
  },
  {
    name: 'get organization role',
    method: 'GET',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${p(param, f.organizationRoleSlug)}`,
    hasParam: true,
  },
  {
    name: 'update organization role',
    method: 'PATCH',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${p(param, f.organizationRoleSlug)}`,
    hasParam: true,
    body: () => ({ name: roleBody.name, description: roleBody.description }),
  },
  {
    name: 'delete organization role',
    method: 'DELETE',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${p(param, `${f.organizationRoleSlug}x`)}`,
    hasParam: true,
  },
  {
    name: "replace an organization role's permissions",
    method: 'PUT',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${p(param, f.organizationRoleSlug)}/permissions`,
    hasParam: true,
    body: (f) => ({ permissions: permissionsArb(f) }),
  },
  {
    name: 'add a permission to an organization role',
    method: 'POST',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${p(param, f.organizationRoleSlug)}/permissions`,
    hasParam: true,
    body: (f) => ({ slug: fc.oneof(fc.constant(f.sparePermissionSlug), hostileString, anyJson) }),
    creates: {
      table: 'role_permissions',
      validBody: (f) => ({ slug: f.sparePermissionSlug }),
      status: 200,
      sameWhenRerun: true,
    },
  },
  {
    name: 'remove a permission from an organization role',
    method: 'DELETE',
    path: (f, param) =>
      `/authorization/organizations/${segment(f.organizationId)}/roles/${segment(f.organizationRoleSlug)}/permissions/${p(param, `${f.permissionSlug}x`)}`,
    hasParam: true,
  },
  {
    name: 'list permissions',
    method: 'GET',
    path: () => '/authorization/permissions',
    hasParam: false,
    query: listQuery,
  },
  {
    name: 'create permission',
    method: 'POST',
    path: () => '/authorization/permissions',
    hasParam: false,
    body: () => ({ ...roleBody, slug: fc.oneof(fc.constantFrom('posts:read', 'a.b-c_d'), hostileString, anyJson) }),
    creates: {
      table: 'permissions',
      validBody: () => ({ slug: `${uniqueSlug('idem')}:read`, name: 'Idempotent permission' }),
      rerunRefused: { status: 409, code: 'permission_slug_conflict' },
    },
  },
  {
    name: 'get permission',
    method: 'GET',
    path: (f, param) => `/authorization/permissions/${p(param, f.permissionSlug)}`,
    hasParam: true,
  },
  {
    name: 'update permission',
    method: 'PATCH',
    path: (f, param) => `/authorization/permissions/${p(param, f.permissionSlug)}`,
    hasParam: true,
    body: () => ({ name: roleBody.name, description: roleBody.description }),
  },
  {
    name: 'delete permission',
    method: 'DELETE',
    path: (f, param) => `/authorization/permissions/${p(param, `${f.permissionSlug}x`)}`,
    hasParam: true,
  },
];

// --- client GraphQL (issue #22, h22/platform) ---

/**
 * An operation of `/client/graphql`, run by the GraphQL reliability suite (graphql.http.test.ts)
 * with the fixture's widget token; a new field is a new row. `namesResource`: its variables name
 * one of the fixture's resources, so through another organization's token it must be an error
 * with `extensions.code` NOT_FOUND, a null field, or a `…NotFound` union variant, never data.
 */
export interface GraphQLOperation {
  name: string;
  query: string;
  variables?: (f: Fixture) => Record<string, unknown>;
  namesResource?: boolean;
}

export const GRAPHQL_OPERATIONS: GraphQLOperation[] = [
  { name: 'clientApiStatus', query: 'query { clientApiStatus }' },
  { name: 'organizations', query: 'query { organizations { id name isCurrent } }' },
  {
    name: 'organization',
    query: 'query ($id: ID!) { organization(id: $id) { id name } }',
    variables: (f) => ({ id: f.organizationId }),
    namesResource: true,
  },
  {
    name: 'user',
    query: 'query ($id: ID!) { user(id: $id) { id email } }',
    variables: (f) => ({ id: f.userId }),
    namesResource: true,
  },
  {
    name: 'organizationDomain',
    query: 'query ($id: ID!) { organizationDomain(id: $id) { id domain } }',
    variables: (f) => ({ id: f.domainId }),
    namesResource: true,
  },
  { name: 'me', query: 'query { me { id email } }' },
  { name: 'organizationMemberships', query: 'query { organizationMemberships { data { id email } } }' },
  { name: 'organizationDomains', query: 'query { organizationDomains { data { id domain } } }' },
  { name: 'sessions', query: 'query { sessions { id organizationId } }' },
];

// --- SCIM (issue #36) ---

/** What the SCIM operations aim at: a directory with its token, one of its users and one group. */
export interface ScimFixture {
  env: TestEnvironment;
  organizationId: string;
  directoryId: string;
  token: string;
  /** HTTP with the directory's token, bodies as application/scim+json. */
  scim: HttpClient;
  userId: string;
  groupId: string;
  /** Another directory of the same organization, and its token (the isolation suite's caller). */
  otherDirectoryId: string;
  otherToken: string;
  /** A directory of another organization of the environment, and its token (the isolation suite's other caller). */
  foreignDirectoryId: string;
  foreignToken: string;
}

export async function makeScimFixture(env: TestEnvironment): Promise<ScimFixture> {
  const org = await created(env.http.post('/organizations', { name: 'SCIM fixture' }), 'organization');
  const scope = await scopeOf(env.deps, env.environmentId);
  const make = (organizationId: string) =>
    createDirectory(scope, { organization_id: organizationId, name: 'IdP', type: 'okta scim v2.0' } as never);
  const directory = await make(org.id);
  const other = await make(org.id);
  const scim = new HttpClient(env.world.url, {
    Authorization: `Bearer ${directory.bearer_token}`,
    'Content-Type': 'application/scim+json',
  });
  const base = `/scim/v2/${directory.id}`;
  const user = await created(scim.post(`${base}/Users`, { userName: uniqueEmail('scim') }), 'SCIM user');
  const group = await created(
    scim.post(`${base}/Groups`, { displayName: 'Fixture', members: [{ value: user.id }] }),
    'SCIM group',
  );
  const foreignOrg = await created(env.http.post('/organizations', { name: 'SCIM fixture, another' }), 'organization');
  const foreign = await make(foreignOrg.id);
  return {
    env,
    organizationId: org.id,
    directoryId: directory.id,
    token: directory.bearer_token,
    scim,
    userId: user.id,
    groupId: group.id,
    otherDirectoryId: other.id,
    otherToken: other.bearer_token,
    foreignDirectoryId: foreign.id,
    foreignToken: foreign.bearer_token,
  };
}

/** An operation of the SCIM surface (`/scim/v2/<directory_id>/…`), run by scim.http.test.ts. */
export interface ScimOperation {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Its route as routers' SCIM_ROUTES names it (`/Users/{id}`). */
  route: string;
  path: (f: ScimFixture, param?: string) => string;
  hasParam: boolean;
  body?: (f: ScimFixture) => Record<string, fc.Arbitrary<unknown>>;
  query?: Record<string, fc.Arbitrary<string>>;
  /** A POST that creates: its table, a valid body, and how a rerun of that body is refused. */
  creates?: { table: string; validBody: (f: ScimFixture) => Record<string, unknown> };
  /** A valid body aimed at the fixture's ids (the isolation suite sends it with another directory's token). */
  sample?: (f: ScimFixture) => Record<string, unknown>;
}

const scimBase = (f: ScimFixture) => `/scim/v2/${f.directoryId}`;
const scimListQuery = {
  filter: fc.oneof(
    fc.constantFrom(
      'userName eq "a@example.com"',
      'displayName eq "Fixture"',
      'emails[type eq "work"].value eq "x"',
      'meta.lastModified gt "2020-01-01T00:00:00Z"',
      'userName eq',
      '((((',
      'a eq "b" and',
    ),
    hostileString,
  ),
  startIndex: fc.oneof(fc.constantFrom('0', '1', '-1', '99999999999', '1.5', 'x'), hostileString),
  count: fc.oneof(fc.constantFrom('0', '1', '100', '101', '-5', 'x'), hostileString),
  attributes: fc.oneof(fc.constantFrom('userName', 'name.givenName', 'urn:x:y', ''), hostileString),
  excludedAttributes: fc.oneof(fc.constantFrom('members', 'emails'), hostileString),
};
const scimUserBody = () => ({
  schemas: fc.oneof(fc.constant(['urn:ietf:params:scim:schemas:core:2.0:User']), anyJson),
  userName: fc.oneof(fc.emailAddress(), hostileString, anyJson),
  externalId: fc.oneof(hostileString, anyJson),
  active: fc.oneof(fc.constantFrom(true, false, 'True', 'False', 'maybe'), anyJson),
  name: fc.oneof(fc.record({ givenName: hostileString, familyName: hostileString }), anyJson),
  emails: fc.oneof(fc.array(fc.record({ value: hostileString, type: hostileString, primary: anyJson })), anyJson),
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': fc.oneof(
    fc.record({ department: hostileString, manager: anyJson }),
    anyJson,
  ),
});
const scimGroupBody = (f: ScimFixture) => ({
  displayName: fc.oneof(fc.constant('Engineers'), hostileString, anyJson),
  externalId: fc.oneof(hostileString, anyJson),
  members: fc.oneof(fc.constant([{ value: f.userId }]), fc.array(fc.record({ value: hostileString })), anyJson),
});
const patchOperation = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'Replace', 'remove', 'move'), anyJson),
    path: fc.oneof(
      fc.constantFrom(
        'active',
        'members',
        'members[value eq "x"]',
        'emails[type eq "work"].value',
        'name.givenName',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
        'id',
        'a[[',
      ),
      hostileString,
    ),
    value: anyJson,
  },
  { requiredKeys: [] },
);
const scimPatchBody = () => ({
  schemas: fc.oneof(fc.constant(['urn:ietf:params:scim:api:messages:2.0:PatchOp']), anyJson),
  Operations: fc.oneof(fc.array(patchOperation, { maxLength: 4 }), anyJson),
});

export const SCIM_OPERATIONS: ScimOperation[] = [
  {
    name: 'scim list users',
    method: 'GET',
    route: '/Users',
    path: (f) => `${scimBase(f)}/Users`,
    hasParam: false,
    query: scimListQuery,
  },
  {
    name: 'scim create user',
    method: 'POST',
    route: '/Users',
    path: (f) => `${scimBase(f)}/Users`,
    hasParam: false,
    body: scimUserBody,
    creates: { table: 'directory_users', validBody: () => ({ userName: uniqueEmail('scim-new') }) },
    sample: () => ({ userName: uniqueEmail('scim-iso') }),
  },
  {
    name: 'scim get user',
    method: 'GET',
    route: '/Users/{id}',
    path: (f, param) => `${scimBase(f)}/Users/${p(param, f.userId)}`,
    hasParam: true,
    query: { attributes: scimListQuery.attributes },
  },
  {
    name: 'scim replace user',
    method: 'PUT',
    route: '/Users/{id}',
    path: (f, param) => `${scimBase(f)}/Users/${p(param, f.userId)}`,
    hasParam: true,
    body: scimUserBody,
    sample: () => ({ userName: uniqueEmail('scim-put'), active: false }),
  },
  {
    name: 'scim patch user',
    method: 'PATCH',
    route: '/Users/{id}',
    path: (f, param) => `${scimBase(f)}/Users/${p(param, f.userId)}`,
    hasParam: true,
    body: scimPatchBody,
    sample: () => ({ Operations: [{ op: 'replace', path: 'active', value: false }] }),
  },
  {
    name: 'scim delete user',
    method: 'DELETE',
    route: '/Users/{id}',
    path: (f, param) => `${scimBase(f)}/Users/${p(param, `${f.userId}x`)}`,
    hasParam: true,
  },
  {
    name: 'scim list groups',
    method: 'GET',
    route: '/Groups',
    path: (f) => `${scimBase(f)}/Groups`,
    hasParam: false,
    query: scimListQuery,
  },
  {
    name: 'scim create group',
    method: 'POST',
    route: '/Groups',
    path: (f) => `${scimBase(f)}/Groups`,
    hasParam: false,
    body: scimGroupBody,
    creates: {
      table: 'directory_groups',
      validBody: () => ({ displayName: 'New', externalId: `ext-${randomUUID().slice(0, 12)}` }),
    },
    sample: (f) => ({ displayName: 'Iso', members: [{ value: f.userId }] }),
  },
  {
    name: 'scim get group',
    method: 'GET',
    route: '/Groups/{id}',
    path: (f, param) => `${scimBase(f)}/Groups/${p(param, f.groupId)}`,
    hasParam: true,
    query: { excludedAttributes: scimListQuery.excludedAttributes },
  },
  {
    name: 'scim replace group',
    method: 'PUT',
    route: '/Groups/{id}',
    path: (f, param) => `${scimBase(f)}/Groups/${p(param, f.groupId)}`,
    hasParam: true,
    body: scimGroupBody,
    sample: () => ({ displayName: 'Renamed', members: [] }),
  },
  {
    name: 'scim patch group',
    method: 'PATCH',
    route: '/Groups/{id}',
    path: (f, param) => `${scimBase(f)}/Groups/${p(param, f.groupId)}`,
    hasParam: true,
    body: scimPatchBody,
    sample: () => ({ Operations: [{ op: 'remove', path: 'members' }] }),
  },
  {
    name: 'scim delete group',
    method: 'DELETE',
    route: '/Groups/{id}',
    path: (f, param) => `${scimBase(f)}/Groups/${p(param, `${f.groupId}x`)}`,
    hasParam: true,
  },
  {
    name: 'scim service provider config',
    method: 'GET',
    route: '/ServiceProviderConfig',
    path: (f) => `${scimBase(f)}/ServiceProviderConfig`,
    hasParam: false,
  },
  {
    name: 'scim resource types',
    method: 'GET',
    route: '/ResourceTypes',
    path: (f) => `${scimBase(f)}/ResourceTypes`,
    hasParam: false,
  },
  {
    name: 'scim resource type',
    method: 'GET',
    route: '/ResourceTypes/{id}',
    path: (f, param) => `${scimBase(f)}/ResourceTypes/${p(param, 'User')}`,
    hasParam: true,
  },
  {
    name: 'scim schemas',
    method: 'GET',
    route: '/Schemas',
    path: (f) => `${scimBase(f)}/Schemas`,
    hasParam: false,
  },
  {
    name: 'scim schema',
    method: 'GET',
    route: '/Schemas/{id}',
    path: (f, param) => `${scimBase(f)}/Schemas/${p(param, 'urn:ietf:params:scim:schemas:core:2.0:Group')}`,
    hasParam: true,
  },
];
