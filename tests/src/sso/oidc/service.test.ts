import { ApiError, configureOidcConnection, consumeOidcCallback } from '@atrium/routers';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OidcIdp } from '../../helpers/oidc-idp.ts';
import { getWorld } from '../../helpers/world.ts';
import {
  connectionEvents,
  connectionRow,
  type OidcSetup,
  oidcSetup,
  publicOnly,
  redirectUriOf,
  scopeOf,
  startAuthorization,
} from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined), 120_000);
// A sign-in is a real provider, a token exchange and a JWKS fetch on loopback: the first one of a
// worker (module and key warm-up) has taken over 30 s on a loaded two-core machine.
vi.setConfig({ testTimeout: 90_000 });

const idps: OidcIdp[] = [];
async function setup(...args: Parameters<typeof oidcSetup>): Promise<OidcSetup> {
  const made = await oidcSetup(...args);
  idps.push(made.idp);
  return made;
}
afterEach(async () => {
  await Promise.all(idps.splice(0).map((idp) => idp.close()));
});

async function configure(s: OidcSetup, extra: Record<string, unknown> = {}) {
  return configureOidcConnection(
    s.scope,
    s.connectionId,
    Object.assign(
      { discovery_endpoint: s.idp.discoveryEndpoint, client_id: s.idp.clientId, client_secret: s.idp.clientSecret },
      extra,
    ),
  );
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('configureOidcConnection', () => {
  it('keeps the discovery document, the client and a sealed secret; returns and events no secret', async () => {
    const s = await setup();
    const connection = await configure(s);
    expect(connection).toMatchObject({ object: 'connection', id: s.connectionId, connection_type: 'GenericOIDC' });
    const row = await connectionRow(s.env, s.connectionId);
    expect(row.oidcIssuer).toBe(s.idp.issuer);
    expect(row.oidcDiscoveryEndpoint).toBe(s.idp.discoveryEndpoint);
    expect(row.oidcMetadata).toMatchObject({
      issuer: s.idp.issuer,
      authorization_endpoint: `${s.idp.issuer}/auth`,
      token_endpoint: `${s.idp.issuer}/token`,
      jwks_uri: `${s.idp.issuer}/jwks`,
    });
    expect(row.oidcClientId).toBe(s.idp.clientId);
    expect(row.oidcClientSecretSealed).toMatch(/^v1\./);
    expect(row.oidcClientSecretSealed).not.toContain(s.idp.clientSecret);
    expect(row.oidcScopes).toEqual(['openid', 'profile', 'email']);
    expect(JSON.stringify(connection)).not.toContain(s.idp.clientSecret);
    const recorded = await connectionEvents(s.env);
    expect(recorded.map((e) => e.event)).toEqual(['connection.created', 'connection.updated']);
    expect(JSON.stringify(recorded)).not.toContain(s.idp.clientSecret);
    expect(JSON.stringify(recorded)).not.toContain(row.oidcClientSecretSealed);
  });

  it('always asks for openid, keeps the secret when the client id stays, stores the claim mapping', async () => {
    const s = await setup();
    await configure(s);
    const sealed = (await connectionRow(s.env, s.connectionId)).oidcClientSecretSealed;
    await configureOidcConnection(s.scope, s.connectionId, {
      discovery_endpoint: s.idp.issuer,
      client_id: s.idp.clientId,
      scopes: ['email', 'groups', 'email'],
      claim_mapping: { email: 'upn', custom: { department: 'dept' } },
    });
    const row = await connectionRow(s.env, s.connectionId);
    expect(row.oidcScopes).toEqual(['openid', 'email', 'groups']);
    expect(row.oidcClientSecretSealed).toBe(sealed);
    expect(row.attributeMapping).toEqual({ email: 'upn', custom: { department: 'dept' } });
    // Another client id without a secret is a public client: the old secret is not kept for it.
    await configureOidcConnection(s.scope, s.connectionId, { discovery_endpoint: s.idp.issuer, client_id: 'public' });
    expect((await connectionRow(s.env, s.connectionId)).oidcClientSecretSealed).toBeNull();
  });

  it('refuses a discovery endpoint on a private address unless the operator allows it, and contacts nothing', async () => {
    const s = await setup();
    const scope = scopeOf(s.env, publicOnly(s.env.deps));
    for (const endpoint of [s.idp.discoveryEndpoint, 'http://localhost:1/x', 'https://10.0.0.8/', 'https://[::1]/']) {
      const error = await refusal(
        configureOidcConnection(scope, s.connectionId, { discovery_endpoint: endpoint, client_id: s.idp.clientId }),
      );
      expect(error.status).toBe(422);
      expect(error.errors?.[0]).toMatchObject({ field: 'discovery_endpoint' });
    }
    expect(s.idp.requests).toEqual([]);
    const row = await connectionRow(s.env, s.connectionId);
    expect(row.oidcIssuer).toBeNull();
    expect(row.oidcClientId).toBeNull();
    expect((await connectionEvents(s.env)).map((e) => e.event)).toEqual(['connection.created']);
    // Allowed (the world's config, as WEBHOOKS_ALLOW_PRIVATE=true): the same endpoint is read.
    await configure(s);
    expect(s.idp.requests).toEqual(['GET /.well-known/openid-configuration']);
  });

  it.each([
    ['no client id', { client_id: '' }, 'client_id'],
    ['a scope with a space', { scopes: ['a b'] }, 'scopes.0'],
    ['not a URL', { discovery_endpoint: 'idp.example.com' }, 'discovery_endpoint'],
    ['ftp', { discovery_endpoint: 'ftp://127.0.0.1/' }, 'discovery_endpoint'],
    ['credentials in the URL', { discovery_endpoint: 'http://u:p@127.0.0.1/' }, 'discovery_endpoint'],
  ])('refuses %s (422) and stores nothing', async (_name, extra, field) => {
    const s = await setup();
    const error = await refusal(configure(s, extra));
    expect(error.status).toBe(422);
    expect(error.errors?.map((e) => e.field)).toContain(field);
    expect((await connectionRow(s.env, s.connectionId)).oidcClientId).toBeNull();
  });

  it('refuses an unreachable discovery document and one whose issuer is not its own', async () => {
    const s = await setup();
    const gone = await refusal(
      configure(s, { discovery_endpoint: 'http://127.0.0.1:9/.well-known/openid-configuration' }),
    );
    expect(gone.errors?.[0]?.message).toMatch(/could not be read/);
    const other = await refusal(
      configure(s, { discovery_endpoint: `${s.idp.issuer}/tenant/.well-known/openid-configuration` }),
    );
    expect(other.status).toBe(422);
    expect((await connectionRow(s.env, s.connectionId)).oidcClientId).toBeNull();
  });

  it('refuses a SAML connection', async () => {
    const s = await setup({}, 'OktaSAML');
    const error = await refusal(configure(s));
    expect(error.errors?.[0]).toMatchObject({ field: 'connection_type' });
    expect(s.idp.requests).toEqual([]);
  });
});

describe('startOidc and consumeOidcCallback', () => {
  it('signs a person in: state, nonce and PKCE S256 in the request; the mapped identity back', async () => {
    const s = await setup();
    await configure(s);
    const { url, expected } = await startAuthorization(s, 'sso_authorization_A1', 'ada.lovelace@example.com');
    const request = new URL(url);
    expect(request.origin + request.pathname).toBe(`${s.idp.issuer}/auth`);
    expect(Object.fromEntries(request.searchParams)).toMatchObject({
      client_id: s.idp.clientId,
      redirect_uri: redirectUriOf(s.env.deps, s.connectionId),
      response_type: 'code',
      scope: 'openid profile email',
      state: 'sso_authorization_A1',
      nonce: expected.oidcNonce,
      code_challenge_method: 'S256',
      login_hint: 'ada.lovelace@example.com',
    });
    expect(request.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    // The verifier is sealed, bound to the authorization; the challenge is not the verifier.
    expect(expected.oidcCodeVerifierSealed).toMatch(/^v1\./);

    const callback = await s.idp.signIn(url, 'ada.lovelace');
    expect(callback.href.startsWith(redirectUriOf(s.env.deps, s.connectionId))).toBe(true);
    const row = await connectionRow(s.env, s.connectionId);
    const identity = await consumeOidcCallback(s.scope, row, callback, expected);
    expect(identity).toEqual({
      idpId: 'ada.lovelace',
      email: 'ada.lovelace@example.com',
      firstName: 'ada',
      lastName: 'lovelace',
      name: 'ada lovelace',
      groups: ['engineering', 'admins'],
      customAttributes: {},
      rawAttributes: expect.objectContaining({
        sub: 'ada.lovelace',
        iss: s.idp.issuer,
        aud: s.idp.clientId,
        email: 'ada.lovelace@example.com',
        email_verified: true,
      }),
    });
    expect(identity.rawAttributes).not.toHaveProperty('nonce');
    expect(s.idp.tokenRequests).toEqual([{ grantType: 'authorization_code', status: 200 }]);
  });

  it("fetches the provider's JWKS once for successive sign-ins of a connection, not once per sign-in", async () => {
    const s = await setup();
    await configure(s);
    const signIns = [
      ['sso_authorization_J1', 'ada.lovelace'],
      ['sso_authorization_J2', 'grace.hopper'],
      ['sso_authorization_J3', 'alan'],
    ] as const;
    for (const [id, login] of signIns) {
      const { url, expected } = await startAuthorization(s, id);
      const callback = await s.idp.signIn(url, login);
      const identity = await consumeOidcCallback(
        s.scope,
        await connectionRow(s.env, s.connectionId),
        callback,
        expected,
      );
      expect(identity.idpId).toBe(login);
    }
    expect(s.idp.tokenRequests).toHaveLength(3);
    expect(s.idp.requests.filter((r) => r === 'GET /jwks')).toHaveLength(1);
  });

  it('merges userinfo when the id_token carries no e-mail', async () => {
    const s = await setup({ idTokenClaims: 'userinfo-only' });
    await configure(s);
    const { url, expected } = await startAuthorization(s, 'sso_authorization_U1');
    const callback = await s.idp.signIn(url, 'grace.hopper');
    const identity = await consumeOidcCallback(s.scope, await connectionRow(s.env, s.connectionId), callback, expected);
    expect(identity).toMatchObject({ idpId: 'grace.hopper', email: 'grace.hopper@example.com', firstName: 'grace' });
    expect(s.idp.requests).toContain('GET /me');
  });

  it('maps claims through the connection mapping, custom attributes included', async () => {
    const s = await setup({
      extraClaims: ['upn', 'dept', 'roles'],
      claimsOf: (login) => ({ upn: `${login}@Corp.Example`, dept: 'R&D', roles: 'admin', name: 'Alan T' }),
    });
    await configure(s, { claim_mapping: { email: 'upn', groups: 'roles', custom: { department: 'dept' } } });
    const { url, expected } = await startAuthorization(s, 'sso_authorization_M1');
    const callback = await s.idp.signIn(url, 'alan');
    const identity = await consumeOidcCallback(s.scope, await connectionRow(s.env, s.connectionId), callback, expected);
    expect(identity).toMatchObject({
      idpId: 'alan',
      email: 'alan@corp.example',
      name: 'Alan T',
      groups: ['admin'],
      customAttributes: { department: 'R&D' },
    });
    expect(identity).not.toHaveProperty('firstName');
  });

  it('refuses an address the provider says is not verified (email_not_verified)', async () => {
    const s = await setup({ claimsOf: (login) => ({ email: `${login}@example.com`, email_verified: false }) });
    await configure(s);
    const { url, expected } = await startAuthorization(s, 'sso_authorization_V1');
    const callback = await s.idp.signIn(url, 'mallory');
    const failure = await consumeOidcCallback(
      s.scope,
      await connectionRow(s.env, s.connectionId),
      callback,
      expected,
    ).catch((e) => e);
    expect(failure).toMatchObject({ name: 'SsoFailure', reason: 'email_not_verified' });
  });
});
