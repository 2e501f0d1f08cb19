import { connections, newId, type SsoAuthorizationState, ssoAuthorizations } from '@atrium/db';
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

const DAY = 86_400_000;
const cert = (name: string, notBefore: number, notAfter: number) => ({
  pem: `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`,
  fingerprint_sha256: `${name}-fingerprint`,
  not_before: new Date(notBefore).toISOString(),
  not_after: new Date(notAfter).toISOString(),
});
const x509 = (c: ReturnType<typeof cert>) => ({
  id: c.fingerprint_sha256,
  value: c.pem,
  notBefore: c.not_before,
  notAfter: c.not_after,
});

/** Sign-in attempts of a connection, oldest first (ids are monotonic). */
async function attempts(env: TestEnvironment, connectionId: string, states: SsoAuthorizationState[]) {
  const ids: string[] = [];
  for (const state of states) {
    const id = newId('ssoAuthorization');
    await env.deps.db.insert(ssoAuthorizations).values({
      id,
      environmentId: env.environmentId,
      connectionId,
      redirectUri: 'https://app.test/callback',
      state,
      expiresAt: new Date(Date.now() + 600_000),
    });
    ids.push(id);
  }
  return ids;
}

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

describe('the AdminPortalSsoConnection widget: certificates and last session', () => {
  it('shows IdP certificates with their validity; during a rotation the new one is the latest expiring', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    const [rotating, expired, oidc, fresh] = await seed(env, a.organizationId, [
      ['OktaSAML', 'Okta', 'active'],
      ['AzureSAML', 'Entra', 'active'],
      ['GenericOIDC', 'OIDC', 'active'],
      ['GenericSAML', 'New', 'inactive'],
    ]);
    const now = Date.now();
    const old = cert('old', now - 400 * DAY, now + 10 * DAY);
    const next = cert('next', now - DAY, now + 700 * DAY);
    const gone = cert('gone', now - 800 * DAY, now - 30 * DAY);
    const goneLater = cert('gone-later', now - 500 * DAY, now - 2 * DAY);
    await env.deps.db
      .update(connections)
      .set({ samlIdpCertificates: [old, next] })
      .where(eq(connections.id, rotating as string));
    await env.deps.db
      .update(connections)
      .set({ samlIdpCertificates: [gone, goneLater] })
      .where(eq(connections.id, expired as string));
    await attempts(env, rotating as string, ['failed', 'started']);
    const [, , newest] = await attempts(env, rotating as string, ['timed_out', 'failed', 'successful']);
    const [oidcLast] = await attempts(env, oidc as string, ['timed_out']);

    const res = await a.http.get(SSO);
    expect(res.status).toBe(200);
    const byId = (id: string | undefined) => res.body.find((c: { id: string }) => c.id === id);
    expect(byId(rotating)).toMatchObject({
      x509Certificates: [x509(old), x509(next)],
      latestExpiringCertificate: x509(next),
      latestExpiredCertificate: null,
      lastSession: { id: newest, state: 'Successful', createdAt: expect.stringMatching(/Z$/) },
    });
    // No certificate valid any more: the widget's "Requires action", with the last one to expire.
    expect(byId(expired)).toMatchObject({
      x509Certificates: [x509(gone), x509(goneLater)],
      latestExpiringCertificate: null,
      latestExpiredCertificate: x509(goneLater),
      lastSession: null,
    });
    const oidcWire = byId(oidc);
    expect(oidcWire).toMatchObject({ providerTag: 'OpenIdConnect', lastSession: { id: oidcLast, state: 'Timedout' } });
    expect(Object.keys(oidcWire)).not.toContain('x509Certificates');
    expect(byId(fresh)).toMatchObject({
      x509Certificates: [],
      latestExpiringCertificate: null,
      latestExpiredCertificate: null,
      lastSession: null,
    });
  });

  it.each([
    ['started', 'Started'],
    ['successful', 'Successful'],
    ['failed', 'Failed'],
    ['timed_out', 'Timedout'],
  ] as const)('maps a last attempt %s to %s', async (state, shown) => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    const [id] = await seed(env, a.organizationId, [['GenericSAML', 'SAML', 'active']]);
    await attempts(env, id as string, [state]);
    expect((await a.http.get(SSO)).body[0].lastSession.state).toBe(shown);
  });

  it("never shows another organization's sign-in attempts", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    const b = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    await seed(env, a.organizationId, [['GenericSAML', 'Ours', 'active']]);
    const [theirs] = await seed(env, b.organizationId, [['GenericSAML', 'Theirs', 'active']]);
    await attempts(env, theirs as string, ['successful']);
    expect((await a.http.get(SSO)).body.map((c: { lastSession: unknown }) => c.lastSession)).toEqual([null]);
  });
});
