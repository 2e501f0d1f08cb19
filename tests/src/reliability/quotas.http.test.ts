import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  agentRegistrations,
  apiKeys,
  auditLogActions,
  auditLogSchemas,
  connections,
  events,
  groups,
  invitations,
  itContacts,
  organizationApiKeys,
  organizationDomains,
  organizationMemberships,
  organizations,
  permissions,
  rawRows,
  roles,
  webhookEndpoints,
} from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { createCaller, createInnerContext, DEFAULT_QUOTAS, type Deps, type Quotas } from '@atrium/routers';
import { loadConfig } from '@atrium/server';
import { and, count, eq, isNotNull, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, uniqueEmail } from '../helpers/people.ts';
import { adminTokenOf } from '../helpers/tokens.ts';
import { getWorld, HttpClient, newEnvironment, uniqueDomain } from '../helpers/world.ts';

/** Small quotas, on deps of their own (the worker's database, caches and clock). */
const QUOTAS: Quotas = {
  domainsPerOrganization: 3,
  webhookEndpointsPerEnvironment: 2,
  pendingVerificationsPerEnvironment: 2,
  apiKeysPerEnvironment: 2,
  groupsPerOrganization: 2,
  connectionsPerOrganization: 2,
  agentRegistrationsPerOrganization: 2,
  directoriesPerOrganization: 2,
  directoryUsersPerDirectory: 2,
  directoryGroupsPerDirectory: 2,
  membershipsPerUser: 2,
  pendingInvitationsPerOrganization: 2,
  itContactsPerOrganization: 2,
  organizationApiKeysPerOrganization: 2,
  userApiKeysPerMembership: 2,
  rolesPerEnvironment: 4,
  rolesPerOrganization: 2,
  permissionsPerEnvironment: 2,
  auditLogActionsPerEnvironment: 2,
  auditLogSchemaVersionsPerAction: 2,
  // Daily mail rates (429), not quotas: left at their defaults here.
  invitationResendsPerDay: DEFAULT_QUOTAS.invitationResendsPerDay,
  invitationMailsPerOrganizationPerDay: DEFAULT_QUOTAS.invitationMailsPerOrganizationPerDay,
};

let deps: Deps;
let server: Server;
let url: string;

beforeAll(async () => {
  const world = await getWorld();
  deps = { ...world.deps, config: { ...world.deps.config, quotas: QUOTAS } };
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A fresh environment, spoken to through the server with the small quotas. */
async function tenant() {
  const env = await newEnvironment();
  const http = new HttpClient(url, { Authorization: `Bearer ${env.apiKey}` });
  const admin = createCaller(createInnerContext(deps, `Bearer ${await adminTokenOf()}`)).admin;
  const organization = async (name = 'Acme') => {
    const res = await http.post('/organizations', { name });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  return { env, http, admin, organization };
}

async function rows(table: PgTable, where: SQL | undefined): Promise<number> {
  const [row] = await deps.db.select({ n: count() }).from(table).where(where);
  return row?.n ?? 0;
}

/** The contract's body for a request over the quota. */
function quotaBody(quota: string, limit: number) {
  return {
    code: 'quota_exceeded',
    message: expect.stringContaining(`at most ${limit} (quota ${quota})`),
    errors: [{ field: quota, code: 'quota_exceeded', message: expect.stringContaining(`at most ${limit}`) }],
  };
}

describe('domains per organization', () => {
  it('refuses the domain over the quota through POST /organization_domains, storing nothing', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    for (let i = 0; i < 3; i++) {
      expect((await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() })).status).toBe(
        201,
      );
    }
    const eventsBefore = await rows(events, eq(events.environmentId, env.environmentId));
    const refused = await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('domains_per_organization', 3));
    // With an Idempotency-Key it answers the same.
    const keyed = await http.request('POST', '/organization_domains', {
      body: { organization_id: org, domain: uniqueDomain() },
      headers: { 'Idempotency-Key': `quota-${Date.now()}` },
    });
    expect(keyed.status).toBe(422);
    expect(keyed.body).toEqual(quotaBody('domains_per_organization', 3));
    expect(await rows(organizationDomains, eq(organizationDomains.organizationId, org))).toBe(3);
    expect(await rows(events, eq(events.environmentId, env.environmentId))).toBe(eventsBefore);
  });

  it('reads an organization at its quota, and frees a place when a domain is deleted', async () => {
    const { http, organization } = await tenant();
    const org = await organization();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() });
      made.push(res.body.id);
    }
    const read = await http.get(`/organizations/${org}`);
    expect(read.status).toBe(200);
    expect(read.body.domains.map((d: { id: string }) => d.id)).toEqual(made);
    const listed = await http.get('/organizations?limit=100');
    expect(listed.status).toBe(200);
    expect(listed.body.data[0].domains).toHaveLength(3);

    expect((await http.delete(`/organization_domains/${made[0]}`)).status).toBe(204);
    expect((await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() })).status).toBe(
      201,
    );
    expect((await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() })).status).toBe(
      422,
    );
  });

  it('reads an organization at the default quota (1,000 domains) in one response under 1 MiB', async () => {
    const { env, organization } = await tenant();
    const org = await organization();
    // The world's server runs with the default quotas. The domains are seeded in one statement:
    // 1,000 creates through the API would only slow the test down.
    await rawRows(
      deps.db,
      sql`insert into organization_domains (id, environment_id, organization_id, domain, state, verification_prefix, verification_token, created_at, updated_at)
        select 'org_domain_' || ${org} || lpad(n::text, 4, '0'), ${env.environmentId}, ${org}, 'd' || n || '-' || ${org.toLowerCase()} || '.com',
               'pending', 'atrium-domain-verification-000000', 'token' || n || ${org}, now(), now()
        from generate_series(1, ${DEFAULT_QUOTAS.domainsPerOrganization}) as n`,
    );
    await deps.db
      .update(organizations)
      .set({ domainCount: DEFAULT_QUOTAS.domainsPerOrganization })
      .where(eq(organizations.id, org));
    const read = await env.http.get(`/organizations/${org}`);
    expect(read.status).toBe(200);
    expect(read.body.domains).toHaveLength(DEFAULT_QUOTAS.domainsPerOrganization);
    expect(Buffer.byteLength(read.text)).toBeLessThan(1024 * 1024);
    // And the next domain is refused at the default quota.
    const next = await env.http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() });
    expect(next.status).toBe(422);
    expect(next.body).toEqual(quotaBody('domains_per_organization', DEFAULT_QUOTAS.domainsPerOrganization));
    expect(await rows(organizationDomains, eq(organizationDomains.organizationId, org))).toBe(1_000);
  });

  it('refuses domain_data over the quota on create, storing no organization', async () => {
    const { env, http } = await tenant();
    const name = `Over ${Date.now()}`;
    const domain_data = Array.from({ length: 4 }, () => ({ domain: uniqueDomain(), state: 'pending' }));
    const res = await http.post('/organizations', { name, domain_data });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(quotaBody('domains_per_organization', 3));
    expect(await rows(organizations, eq(organizations.environmentId, env.environmentId))).toBe(0);
    expect(await rows(organizationDomains, eq(organizationDomains.environmentId, env.environmentId))).toBe(0);
    expect(await rows(events, eq(events.environmentId, env.environmentId))).toBe(0);
    // At the quota exactly, it is created.
    const ok = await http.post('/organizations', { name, domain_data: domain_data.slice(0, 3) });
    expect(ok.status).toBe(201);
    expect(ok.body.domains).toHaveLength(3);
  });

  it('refuses domain_data over the quota on update, changing nothing', async () => {
    const { http } = await tenant();
    const created = await http.post('/organizations', {
      name: 'Before',
      domain_data: [
        { domain: uniqueDomain(), state: 'pending' },
        { domain: uniqueDomain(), state: 'verified' },
      ],
    });
    const org = created.body.id as string;
    const res = await http.put(`/organizations/${org}`, {
      name: 'After',
      domain_data: [
        { domain: uniqueDomain(), state: 'pending' },
        { domain: uniqueDomain(), state: 'pending' },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(quotaBody('domains_per_organization', 3));
    const read = await http.get(`/organizations/${org}`);
    expect(read.body.name).toBe('Before');
    expect(read.body.domains).toEqual(created.body.domains);
    // Domains it already holds do not count twice.
    const again = await http.put(`/organizations/${org}`, {
      domain_data: [...created.body.domains.map((d: { domain: string }) => ({ domain: d.domain, state: 'pending' }))],
    });
    expect(again.status).toBe(200);
  });

  it('holds under concurrency: 20 concurrent creates against a quota of 5 leave exactly 5', async () => {
    const { http, organization } = await tenant();
    const org = await organization();
    const local = { ...deps, config: { ...deps.config, quotas: { ...QUOTAS, domainsPerOrganization: 5 } } };
    const own = createServer(createApp(local, { baseUrl: 'http://127.0.0.1' }).handler);
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const client = new HttpClient(`http://127.0.0.1:${(own.address() as AddressInfo).port}`, http.defaultHeaders);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          client.post('/organization_domains', { organization_id: org, domain: uniqueDomain() }),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(5);
      expect(statuses.filter((s) => s === 422)).toHaveLength(15);
      for (const a of answers.filter((x) => x.status === 422)) {
        expect(a.body).toEqual(quotaBody('domains_per_organization', 5));
      }
      expect(await rows(organizationDomains, eq(organizationDomains.organizationId, org))).toBe(5);
      const [row] = await deps.db
        .select({ n: organizations.domainCount })
        .from(organizations)
        .where(eq(organizations.id, org));
      expect(row?.n).toBe(5);
    } finally {
      await new Promise<void>((resolve) => own.close(() => resolve()));
    }
  });
});

describe('pending verifications per environment', () => {
  it('refuses to schedule a check over the quota; re-verifying a scheduled domain is not counted twice', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await http.post('/organization_domains', { organization_id: org, domain: uniqueDomain() })).body.id);
    }
    const [a, b, c] = ids as [string, string, string];
    expect((await http.post(`/organization_domains/${a}/verify`, {})).status).toBe(201);
    expect((await http.post(`/organization_domains/${b}/verify`, {})).status).toBe(201);
    expect((await http.post(`/organization_domains/${a}/verify`, {})).status).toBe(201);
    const eventsBefore = await rows(events, eq(events.environmentId, env.environmentId));
    const refused = await http.post(`/organization_domains/${c}/verify`, {});
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('pending_verifications_per_environment', 2));
    const scheduled = and(
      eq(organizationDomains.environmentId, env.environmentId),
      isNotNull(organizationDomains.nextCheckAt),
    );
    expect(await rows(organizationDomains, scheduled)).toBe(2);
    expect(await rows(events, eq(events.environmentId, env.environmentId))).toBe(eventsBefore);
  });
});

describe('webhook endpoints per environment', () => {
  it('refuses the endpoint over the quota, storing nothing', async () => {
    const { env, http } = await tenant();
    for (let i = 0; i < 2; i++) {
      const res = await http.post('/webhook_endpoints', {
        endpoint_url: `https://hooks.example.com/${i}`,
        events: ['*'],
      });
      expect(res.status).toBe(201);
    }
    const refused = await http.post('/webhook_endpoints', {
      endpoint_url: 'https://hooks.example.com/3',
      events: ['*'],
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('webhook_endpoints_per_environment', 2));
    expect(await rows(webhookEndpoints, eq(webhookEndpoints.environmentId, env.environmentId))).toBe(2);
  });
});

describe('groups per organization', () => {
  it('refuses the group over the quota, storing nothing', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    for (let i = 0; i < 2; i++) {
      expect((await http.post(`/organizations/${org}/groups`, { name: `g${i}` })).status).toBe(201);
    }
    const refused = await http.post(`/organizations/${org}/groups`, { name: 'g3' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('groups_per_organization', 2));
    expect(await rows(groups, eq(groups.environmentId, env.environmentId))).toBe(2);
    // Another organization has its own quota.
    const other = await organization('Globex');
    expect((await http.post(`/organizations/${other}/groups`, { name: 'g' })).status).toBe(201);
  });
});

describe('IT contacts and API keys per organization', () => {
  it('refuses the IT contact over the quota, storing nothing; another organization has its own', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    for (let i = 0; i < 2; i++) {
      expect((await http.post(`/organizations/${org}/it_contacts`, { email: `it${i}@acme.com` })).status).toBe(201);
    }
    const refused = await http.post(`/organizations/${org}/it_contacts`, { email: 'it3@acme.com' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('it_contacts_per_organization', 2));
    expect(await rows(itContacts, eq(itContacts.environmentId, env.environmentId))).toBe(2);
    const other = await organization('Globex');
    expect((await http.post(`/organizations/${other}/it_contacts`, { email: 'it@globex.com' })).status).toBe(201);
  });

  it('refuses the organization API key over the quota, storing nothing; a deleted key frees a place', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    const made = [];
    for (let i = 0; i < 2; i++) {
      const res = await http.post(`/organizations/${org}/api_keys`, { name: `k${i}` });
      expect(res.status).toBe(201);
      made.push(res.body.id as string);
    }
    const refused = await http.post(`/organizations/${org}/api_keys`, { name: 'k3' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('organization_api_keys_per_organization', 2));
    expect(await rows(organizationApiKeys, eq(organizationApiKeys.environmentId, env.environmentId))).toBe(2);
    expect((await http.delete(`/api_keys/${made[0]}`)).status).toBe(204);
    expect((await http.post(`/organizations/${org}/api_keys`, { name: 'k3' })).status).toBe(201);
  });
});

describe('memberships per user', () => {
  it('refuses the membership over the quota, storing nothing', async () => {
    const { env, http, organization } = await tenant();
    const user = await http.post('/user_management/users', { email: uniqueEmail() });
    expect(user.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const res = await http.post('/user_management/organization_memberships', {
        user_id: user.body.id,
        organization_id: await organization(`Org ${i}`),
      });
      expect(res.status).toBe(201);
    }
    const refused = await http.post('/user_management/organization_memberships', {
      user_id: user.body.id,
      organization_id: await organization('Org 3'),
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('memberships_per_user', 2));
    expect(await rows(organizationMemberships, eq(organizationMemberships.environmentId, env.environmentId))).toBe(2);
  });
});

describe('pending invitations per organization', () => {
  it('refuses the invitation over the quota, storing nothing; revoked ones free a place', async () => {
    const { env, http, organization } = await tenant();
    const org = await organization();
    const sent: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await http.post('/user_management/invitations', { email: uniqueEmail(), organization_id: org });
      expect(res.status).toBe(201);
      sent.push(res.body.id);
    }
    const eventsBefore = await rows(events, eq(events.environmentId, env.environmentId));
    const refused = await http.post('/user_management/invitations', { email: uniqueEmail(), organization_id: org });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(quotaBody('pending_invitations_per_organization', 2));
    expect(await rows(invitations, eq(invitations.environmentId, env.environmentId))).toBe(2);
    expect(await rows(events, eq(events.environmentId, env.environmentId))).toBe(eventsBefore);
    // Invitations without an organization, and another organization's, are not counted.
    expect((await http.post('/user_management/invitations', { email: uniqueEmail() })).status).toBe(201);
    const other = await organization('Globex');
    const elsewhere = { email: uniqueEmail(), organization_id: other };
    expect((await http.post('/user_management/invitations', elsewhere)).status).toBe(201);
    // A revoked invitation is not pending: its place is free again.
    expect((await http.post(`/user_management/invitations/${sent[0]}/revoke`, {})).status).toBe(200);
    const again = { email: uniqueEmail(), organization_id: org };
    expect((await http.post('/user_management/invitations', again)).status).toBe(201);
  });
});

describe('admin creates', () => {
  it('refuses the connection over the per-organization quota, storing nothing', async () => {
    const { env, admin, organization } = await tenant();
    const org = await organization();
    const create = () =>
      admin.connections.create({
        environment: env.environmentId,
        organization_id: org,
        connection_type: 'GenericSAML',
        name: 'SSO',
      });
    await create();
    await create();
    expect(await failure(create())).toEqual({ status: 422, code: 'quota_exceeded' });
    expect(await rows(connections, eq(connections.environmentId, env.environmentId))).toBe(2);
  });

  it('refuses the agent registration over the per-organization quota, storing nothing', async () => {
    const { env, admin, organization } = await tenant();
    const org = await organization();
    const register = () => admin.agents.register({ environment: env.environmentId, organization_id: org });
    await register();
    await register();
    expect(await failure(register())).toEqual({ status: 422, code: 'quota_exceeded' });
    expect(await rows(agentRegistrations, eq(agentRegistrations.environmentId, env.environmentId))).toBe(2);
  });

  it('refuses the API key over the per-environment quota (the first-start key counts), storing nothing', async () => {
    const { env, admin } = await tenant();
    await admin.apiKeys.create({ environment: env.environmentId });
    expect(await failure(admin.apiKeys.create({ environment: env.environmentId }))).toEqual({
      status: 422,
      code: 'quota_exceeded',
    });
    expect(await rows(apiKeys, eq(apiKeys.environmentId, env.environmentId))).toBe(2);
  });
});

describe('roles and permissions', () => {
  it('refuses an environment role, an organization role and a permission over their quotas, storing nothing', async () => {
    const { env, http, organization } = await tenant();
    const mine = eq(roles.environmentId, env.environmentId);
    // A new environment has member and admin: two more environment roles reach the quota of 4.
    for (const slug of ['r1', 'r2'])
      expect((await http.post('/authorization/roles', { slug, name: slug })).status).toBe(201);
    const role = await http.post('/authorization/roles', { slug: 'r3', name: 'r3' });
    expect(role.status).toBe(422);
    expect(role.body).toEqual(quotaBody('roles_per_environment', 4));

    const org = await organization();
    const orgRoles = `/authorization/organizations/${org}/roles`;
    for (const slug of ['org-1', 'org-2']) expect((await http.post(orgRoles, { slug, name: slug })).status).toBe(201);
    const orgRole = await http.post(orgRoles, { slug: 'org-3', name: 'org-3' });
    expect(orgRole.status).toBe(422);
    expect(orgRole.body).toEqual(quotaBody('roles_per_organization', 2));
    expect(await rows(roles, mine)).toBe(6);

    for (const slug of ['p:1', 'p:2']) {
      expect((await http.post('/authorization/permissions', { slug, name: slug })).status).toBe(201);
    }
    const permission = await http.post('/authorization/permissions', { slug: 'p:3', name: 'p:3' });
    expect(permission.status).toBe(422);
    expect(permission.body).toEqual(quotaBody('permissions_per_environment', 2));
    // The environment's own: its system permissions (the widgets' scopes) do not count.
    const own = and(eq(permissions.environmentId, env.environmentId), eq(permissions.system, false));
    expect(await rows(permissions, own)).toBe(2);
  });
});

describe('audit log actions and schema versions', () => {
  it('refuses a third action and a third version of an action, storing nothing', async () => {
    const { env, http } = await tenant();
    const schema = { targets: [{ type: 'team' }] };
    for (const action of ['a.one', 'a.two']) {
      expect((await http.post(`/audit_logs/actions/${action}/schemas`, schema)).status).toBe(201);
    }
    const action = await http.post('/audit_logs/actions/a.three/schemas', schema);
    expect(action.status).toBe(422);
    expect(action.body).toEqual(quotaBody('audit_log_actions_per_environment', 2));
    expect(await rows(auditLogActions, eq(auditLogActions.environmentId, env.environmentId))).toBe(2);
    // A new version of an existing action is not a new action.
    expect((await http.post('/audit_logs/actions/a.one/schemas', schema)).body.version).toBe(2);
    const version = await http.post('/audit_logs/actions/a.one/schemas', schema);
    expect(version.status).toBe(422);
    expect(version.body).toEqual(quotaBody('audit_log_schema_versions_per_action', 2));
    expect(await rows(auditLogSchemas, eq(auditLogSchemas.environmentId, env.environmentId))).toBe(3);
  });
});

describe('metadata keys per object', () => {
  it('refuses 51 metadata keys with a 422, storing nothing', async () => {
    const { env, http } = await tenant();
    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const res = await http.post('/organizations', { name: 'Meta', metadata });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(await rows(organizations, eq(organizations.environmentId, env.environmentId))).toBe(0);
  });
});

describe('configuration', () => {
  it('reads each quota from ATRIUM_QUOTA_<NAME>, with the contract defaults', () => {
    expect(loadConfig({}).quotas).toEqual(DEFAULT_QUOTAS);
    expect(DEFAULT_QUOTAS).toMatchObject({
      domainsPerOrganization: 1_000,
      webhookEndpointsPerEnvironment: 100,
      pendingVerificationsPerEnvironment: 10_000,
    });
    const config = loadConfig({
      ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION: '7',
      ATRIUM_QUOTA_WEBHOOK_ENDPOINTS_PER_ENVIRONMENT: '8',
      ATRIUM_QUOTA_PENDING_VERIFICATIONS_PER_ENVIRONMENT: '9',
      ATRIUM_QUOTA_MEMBERSHIPS_PER_USER: '10',
    });
    expect(config.quotas).toMatchObject({
      domainsPerOrganization: 7,
      webhookEndpointsPerEnvironment: 8,
      pendingVerificationsPerEnvironment: 9,
      membershipsPerUser: 10,
      groupsPerOrganization: DEFAULT_QUOTAS.groupsPerOrganization,
    });
    expect(() => loadConfig({ ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION: 'lots' })).toThrow(
      /ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION/,
    );
  });
});
