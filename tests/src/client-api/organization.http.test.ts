import { environments, organizationMemberships } from '@atrium/db';
import { TRPCClientError } from '@trpc/client';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientFor, clientSetup } from '../helpers/client.ts';
import { statementsOf } from '../helpers/statements.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';
import { addMember } from './members-helpers.ts';
import { graphqlRequestFor, portalCaller, trpcFor } from './self-helpers.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function environmentName(env: TestEnvironment): Promise<string> {
  const [row] = await env.deps.db.select().from(environments).where(eq(environments.id, env.environmentId));
  return String(row?.name);
}

describe('GET /_widgets/settings', () => {
  it("answers the SettingsResponse: the environment's name and the server's base URL, no logos", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: [] });
    const res = await a.http.get('/_widgets/settings');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'settings',
      authkitOrigin: TEST_ISSUER,
      teamName: await environmentName(env),
      logoDarkIconPath: null,
      logoDarkPath: null,
      logoLightIconPath: null,
      logoLightPath: null,
    });
  });

  it('refuses a missing token and an API key with 403', async () => {
    const env = await newEnvironment();
    expect((await fetch(`${env.world.url}/_widgets/settings`)).status).toBe(403);
    expect((await env.http.get('/_widgets/settings')).status).toBe(403);
  });
});

describe('the organization and settings on GraphQL', () => {
  it("organization(id) answers the token's organization only", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const other = await clientSetup(env);
    const query =
      'query ($id: ID!) { organization(id: $id) { id name allowProfilesOutsideOrganization createdAt updatedAt } }';
    const own = await graphqlRequestFor(env, a.token).request<{ organization: unknown }>(query, {
      id: a.organizationId,
    });
    const stored = (await env.http.get(`/organizations/${a.organizationId}`)).body;
    // Read without the domains (organizations_get_summary), it says what the REST read says.
    expect(own.organization).toEqual({
      id: a.organizationId,
      name: stored.name,
      allowProfilesOutsideOrganization: false,
      createdAt: stored.created_at,
      updatedAt: stored.updated_at,
    });
    expect(stored.created_at).toMatch(ISO);
    expect(stored.allow_profiles_outside_organization).toBe(false);
    // Another organization of the environment, even one the caller's user may see elsewhere, is NOT_FOUND.
    for (const id of [other.organizationId, 'org_01NOPE']) {
      const res = await a.graphql(query, { id });
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors[0]).toMatchObject({ extensions: { code: 'NOT_FOUND', status: 404 } });
      expect(res.body.errors[0].message).toContain(id);
    }
  });

  it("organization(id) with a widget token is two statements, its floor's, and a deactivated member is refused on the next one", async () => {
    const env = await newEnvironment();
    const org = await env.http.post('/organizations', { name: 'Floor Corp' });
    const member = await addMember(env, org.body.id, { roleSlug: 'admin' });
    const issued = await env.http.post('/widgets/token', {
      organization_id: org.body.id,
      user_id: member.userId,
      scopes: ['widgets:users-table:manage'],
    });
    expect(issued.status).toBe(201);
    const { graphql } = clientFor(env, issued.body.token);
    const query = 'query ($id: ID!) { organization(id: $id) { id name } }';
    // The first use verifies the token and reads the environment (both cached after); not counted.
    expect((await graphql(query, { id: org.body.id })).status).toBe(200);
    const read = await statementsOf(env.deps.db, () => graphql(query, { id: org.body.id }));
    expect(read.result).toEqual({
      status: 200,
      body: { data: { organization: { id: org.body.id, name: 'Floor Corp' } } },
    });
    // bench/floors/graphql.ts sends the same two: the permissions the membership still grants, then the organization.
    expect(read.statements).toHaveLength(2);
    expect(read.statements[0]).toMatch(/"permissions"[\s\S]*from "organization_memberships"/);
    expect(read.statements[1]).toMatch(/from "organizations" where/);

    const deactivated = await env.http.put(
      `/user_management/organization_memberships/${member.membershipId}/deactivate`,
      {},
    );
    expect(deactivated.status).toBe(200);
    const refused = await statementsOf(env.deps.db, () => graphql(query, { id: org.body.id }));
    expect(refused.result.status).toBe(403);
    expect(refused.result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(refused.result.body.data).toBeUndefined();
    // Refused by the permissions read alone: the organization was not read.
    expect(refused.statements).toHaveLength(1);
    const [stored] = await env.deps.db
      .select({ status: organizationMemberships.status })
      .from(organizationMemberships)
      .where(eq(organizationMemberships.id, member.membershipId));
    expect(stored?.status).toBe('inactive');
  });

  it('branding, authkitSettings and authenticationSettings describe the deployment', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const res = await a.graphql(`{
      branding { displayName logoDarkIconPath logoDarkPath logoLightIconPath logoLightPath }
      authkitSettings { origin }
      authenticationSettings { mfaEnabled mfaRequired passkeyAuthEnabled passwordAuthEnabled
        passwordPolicy { minLength maxLength } }
    }`);
    expect(res).toEqual({
      status: 200,
      body: {
        data: {
          branding: {
            displayName: await environmentName(env),
            logoDarkIconPath: null,
            logoDarkPath: null,
            logoLightIconPath: null,
            logoLightPath: null,
          },
          authkitSettings: { origin: TEST_ISSUER },
          authenticationSettings: {
            mfaEnabled: false,
            mfaRequired: false,
            passkeyAuthEnabled: false,
            passwordAuthEnabled: true,
            passwordPolicy: { minLength: 8, maxLength: 1024 },
          },
        },
      },
    });
  });
});

describe('the organization on typed tRPC', () => {
  it("client.organization answers the token's organization, 404 for another", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const other = await clientSetup(env);
    const trpc = trpcFor(env, a.token);
    expect(await trpc.client.organization.query({ id: a.organizationId })).toEqual({
      id: a.organizationId,
      name: expect.any(String),
      allowProfilesOutsideOrganization: false,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const refused = await trpc.client.organization.query({ id: other.organizationId }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(404);
  });
});

describe('an admin-portal principal (no user)', () => {
  it("reads its organization and the settings (they need no user), never another organization's", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const other = await clientSetup(env);
    const portal = await portalCaller(env, a.organizationId);
    expect(await portal.caller.client.organization({ id: a.organizationId })).toMatchObject({ id: a.organizationId });
    await expect(portal.caller.client.organization({ id: other.organizationId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await portal.caller.widgets.settings({})).toMatchObject({ object: 'settings', authkitOrigin: TEST_ISSUER });
  });
});
