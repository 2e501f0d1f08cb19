import { connections } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { gqlError, surfaces, trpcStatus } from '../helpers/client-surfaces.ts';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const SSO = '/_widgets/admin-portal/sso-connections';
const FIELDS = 'id name organizationId type state setupComplete createdAt updatedAt';

/** The widget's lists (WIDGETS-API.md §2.2): anything else makes AdminPortalSsoConnection throw. */
const SAML_TYPES = new Set(
  'AdfsSaml Auth0Saml AzureSaml CasSaml ClassLinkSaml CloudflareSaml CyberArkSaml DuoSaml GenericSaml GoogleSaml JumpCloudSaml KeycloakSaml LastPassSaml MiniOrangeSaml NetIqSaml OktaSaml OneLoginSaml OracleSaml PingFederateSaml PingOneSaml RipplingSaml SalesforceSaml ShibbolethGenericSaml ShibbolethSaml SimpleSamlPhpSaml TestIdp VmWareSaml'.split(
    ' ',
  ),
);
const OIDC_TYPES = new Set(
  'AdpOidc Auth0Migration CleverOidc EntraIdOidc GenericOidc GoogleOidc OktaOidc LoginGovOidc'.split(' '),
);
const STATES = new Set(['Inactive', 'Validating', 'Active', 'Deleting']);

/** Connections stored through the admin surface (the API-key surface has no create). */
async function seed(
  env: TestEnvironment,
  organizationId: string,
  made: Array<[string, string, 'active' | 'inactive']>,
) {
  const admin = await adminCaller();
  const ids: string[] = [];
  for (const [connection_type, name, state] of made) {
    const c = await admin.connections.create({
      environment: env.environmentId,
      organization_id: organizationId,
      connection_type: connection_type as 'OktaSAML',
      name,
      state,
    });
    ids.push(c.id);
  }
  return ids;
}

const stored = async (env: TestEnvironment, id: string) =>
  (await env.deps.db.select().from(connections).where(eq(connections.id, id)))[0];

describe('SSO connections on the client surfaces', () => {
  it('lists SAML and OIDC connections in the widget’s shape and enumerations, never OAuth or another organization’s', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await clientSetup(env);
    const [okta, entra, vmware] = await seed(env, a.organizationId, [
      ['OktaSAML', 'Okta', 'active'],
      ['EntraIdOIDC', 'Entra', 'inactive'],
      ['VMwareSAML', 'VMware', 'active'],
      ['GoogleOAuth', 'Google login', 'active'],
    ]);
    await seed(env, b.organizationId, [['OktaSAML', 'Theirs', 'active']]);

    const rest = await a.http.get(SSO);
    expect(rest.status).toBe(200);
    expect(Array.isArray(rest.body)).toBe(true);
    expect(rest.body.map((c: { id: string }) => c.id).sort()).toEqual([okta, entra, vmware].sort());
    for (const c of rest.body) {
      expect(STATES.has(c.state)).toBe(true);
      expect((c.providerTag === 'Saml' ? SAML_TYPES : OIDC_TYPES).has(c.type)).toBe(true);
    }
    expect(rest.body.find((c: { id: string }) => c.id === okta)).toEqual({
      id: okta,
      name: 'Okta',
      providerTag: 'Saml',
      type: 'OktaSaml',
      state: 'Active',
      createdAt: expect.stringMatching(/Z$/),
      lastSession: null,
      x509Certificates: [],
      latestExpiringCertificate: null,
      latestExpiredCertificate: null,
    });
    expect(rest.body.find((c: { id: string }) => c.id === entra)).toMatchObject({
      providerTag: 'OpenIdConnect',
      type: 'EntraIdOidc',
      state: 'Inactive',
    });
    expect(rest.body.find((c: { id: string }) => c.id === vmware)).toMatchObject({ type: 'VmWareSaml' });

    const { gql, trpc } = surfaces(env, a);
    const listed = await gql.request<any>(`{ ssoConnections { ${FIELDS} } }`);
    expect(listed.ssoConnections).toHaveLength(3);
    const one = await gql.request<any>(`query($id: ID!) { ssoConnection(id: $id) { ${FIELDS} } }`, { id: entra });
    expect(one.ssoConnection).toMatchObject({
      id: entra,
      organizationId: a.organizationId,
      type: 'EntraIdOIDC',
      state: 'Inactive',
      setupComplete: false,
    });
    expect((await trpc.client.sso.list.query()).map((c) => c.type).sort()).toEqual([
      'EntraIdOIDC',
      'OktaSAML',
      'VMwareSAML',
    ]);
    expect(await trpc.client.sso.get.query({ id: okta as string })).toMatchObject({
      state: 'Active',
      setupComplete: true,
    });
  });

  it('creates, renames and deletes a connection on GraphQL and tRPC, with events', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const { gql, trpc } = surfaces(env, a);
    const before = (await storedEvents(env)).length;

    const created = await gql.request<any>(
      `mutation { createSsoConnection(input: {type: OktaSAML, name: "Okta"}) { ${FIELDS} } }`,
    );
    const c = created.createSsoConnection;
    // A new connection is in setup (the widget's "Setup in progress").
    expect(c).toMatchObject({ name: 'Okta', type: 'OktaSAML', state: 'Inactive', organizationId: a.organizationId });
    const renamed = await gql.request<any>(
      `mutation($id: ID!) { updateSsoConnection(input: {id: $id, name: "Okta (prod)"}) { id name } }`,
      { id: c.id },
    );
    expect(renamed.updateSsoConnection).toEqual({ id: c.id, name: 'Okta (prod)' });
    expect((await stored(env, c.id))?.name).toBe('Okta (prod)');
    const typed = await trpc.client.sso.create.mutate({ type: 'GenericOIDC' });
    expect(typed).toMatchObject({ name: 'GenericOIDC', type: 'GenericOIDC', state: 'Inactive' });
    expect(await trpc.client.sso.update.mutate({ id: typed.id, name: 'Generic' })).toMatchObject({ name: 'Generic' });
    expect((await a.http.get(SSO)).body).toHaveLength(2);

    expect(await gql.request<any>(`mutation { deleteSsoConnection(id: "${c.id}") }`)).toEqual({
      deleteSsoConnection: c.id,
    });
    expect(await trpc.client.sso.delete.mutate({ id: typed.id })).toEqual({ id: typed.id });
    expect(await stored(env, c.id)).toBeUndefined();
    expect(await eventNamesSince(env, before)).toEqual([
      'connection.created',
      'connection.updated',
      'connection.created',
      'connection.updated',
      'connection.deleted',
      'connection.deleted',
    ]);
  });

  it.each([
    ['a type Atrium does not store', 'mutation { createSsoConnection(input: {type: Auth0SAML}) { id } }', 'Auth0SAML'],
    ['an OAuth type', 'mutation { createSsoConnection(input: {type: GoogleOAuth}) { id } }', 'GoogleOAuth'],
    [
      'a name too long',
      `mutation { createSsoConnection(input: {type: OktaSAML, name: "${'x'.repeat(300)}"}) { id } }`,
      'OktaSAML',
    ],
  ])('refuses %s with 422 / BAD_USER_INPUT and stores nothing', async (_label, mutation, type) => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const { gql, trpc } = surfaces(env, a);
    const before = (await storedEvents(env)).length;
    expect((await gqlError(gql.request(mutation))).extensions).toMatchObject({ code: 'BAD_USER_INPUT', status: 422 });
    const name = mutation.includes('xxx') ? 'x'.repeat(300) : undefined;
    expect(await trpcStatus(trpc.client.sso.create.mutate({ type, name }))).toBe(422);
    expect((await a.http.get(SSO)).body).toEqual([]);
    expect(await eventNamesSince(env, before)).toEqual([]);
  });

  it('refuses an empty rename with 422 and keeps the name', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const [id] = await seed(env, a.organizationId, [['OktaSAML', 'Okta', 'active']]);
    const { gql, trpc } = surfaces(env, a);
    const error = await gqlError(
      gql.request(`mutation { updateSsoConnection(input: {id: "${id}", name: "  "}) { id } }`),
    );
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await trpcStatus(trpc.client.sso.update.mutate({ id: id as string, name: '' }))).toBe(422);
    expect((await stored(env, id as string))?.name).toBe('Okta');
  });

  it('answers 403 / FORBIDDEN without widgets:sso:manage, and changes nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:domain-verification:manage'] });
    const [id] = await seed(env, a.organizationId, [['OktaSAML', 'Okta', 'active']]);
    const { gql, trpc } = surfaces(env, a);
    const rest = await a.http.get(SSO);
    expect(rest.status).toBe(403);
    expect(rest.body.message).toMatch(/widgets:sso:manage/);
    for (const op of [
      '{ ssoConnections { id } }',
      `mutation { deleteSsoConnection(id: "${id}") }`,
      'mutation { createSsoConnection(input: {type: OktaSAML}) { id } }',
    ]) {
      expect((await gqlError(gql.request(op))).extensions.code).toBe('FORBIDDEN');
    }
    expect(await trpcStatus(trpc.client.sso.update.mutate({ id: id as string, name: 'x' }))).toBe(403);
    expect(await stored(env, id as string)).toMatchObject({ name: 'Okta' });
  });

  it('treats another organization’s connection (or an OAuth one) as absent: 404 / NOT_FOUND', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await clientSetup(env);
    const [theirs] = await seed(env, b.organizationId, [['OktaSAML', 'Theirs', 'active']]);
    const [oauth] = await seed(env, a.organizationId, [['GoogleOAuth', 'Google', 'active']]);
    const { gql, trpc } = surfaces(env, a);
    for (const id of [theirs, oauth]) {
      const error = await gqlError(gql.request(`mutation { deleteSsoConnection(id: "${id}") }`));
      expect(error.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      expect(await trpcStatus(trpc.client.sso.get.query({ id: id as string }))).toBe(404);
      expect(await stored(env, id as string)).toBeDefined();
    }
  });
});
