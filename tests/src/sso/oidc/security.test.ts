import { configureOidcConnection, consumeOidcCallback } from '@atrium/routers';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IdTokenTamper, OidcIdp } from '../../helpers/oidc-idp.ts';
import { getWorld } from '../../helpers/world.ts';
import { connectionRow, type OidcSetup, oidcSetup, publicOnly, scopeOf, startAuthorization } from './helpers.ts';

// Each attack on the OpenID Connect callback, and the `SsoFailure` reason it ends in. The provider
// is a real one (oidc-provider on loopback); tampered id_tokens are re-signed after it answered.

beforeAll(() => getWorld().then(() => undefined), 120_000);

const idps: OidcIdp[] = [];
afterEach(async () => {
  await Promise.all(idps.splice(0).map((idp) => idp.close()));
});

async function configured(): Promise<OidcSetup> {
  const s = await oidcSetup();
  idps.push(s.idp);
  await configureOidcConnection(s.scope, s.connectionId, {
    discovery_endpoint: s.idp.discoveryEndpoint,
    client_id: s.idp.clientId,
    client_secret: s.idp.clientSecret,
  });
  return s;
}

/** The failure (or identity) of consuming `callback` against `expected`. */
async function outcome(
  s: OidcSetup,
  callback: URL,
  expected: Parameters<typeof consumeOidcCallback>[3],
  scope = s.scope,
) {
  const row = await connectionRow(s.env, s.connectionId);
  return consumeOidcCallback(scope, row, callback, expected).then(
    (identity) => ({ ok: true as const, identity }),
    (error: { name: string; reason: string; message: string }) => ({
      ok: false as const,
      name: error.name,
      reason: error.reason,
      message: error.message,
    }),
  );
}

/** A sign-in up to the callback the provider sends the browser to. */
async function signedIn(s: OidcSetup, authorizationId: string, login = 'eve') {
  const started = await startAuthorization(s, authorizationId);
  const callback = await s.idp.signIn(started.url, login);
  return { callback, expected: started.expected };
}

describe('OIDC callback: state', () => {
  it('refuses a callback whose state is another authorization (state_mismatch)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_SA');
    const b = await startAuthorization(s, 'sso_authorization_SB');
    const result = await outcome(s, a.callback, b.expected);
    expect(result).toMatchObject({ ok: false, name: 'SsoFailure', reason: 'state_mismatch' });
    // Refused before the code was spent: no token request was made.
    expect(s.idp.tokenRequests).toEqual([]);
  });

  it('refuses a callback without state, or with a forged one (state_mismatch)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_SM');
    const missing = new URL(a.callback);
    missing.searchParams.delete('state');
    expect(await outcome(s, missing, a.expected)).toMatchObject({ ok: false, reason: 'state_mismatch' });
    const forged = new URL(a.callback);
    forged.searchParams.set('state', 'sso_authorization_FORGED');
    expect(await outcome(s, forged, a.expected)).toMatchObject({ ok: false, reason: 'state_mismatch' });
    expect(s.idp.tokenRequests).toEqual([]);
    // The genuine callback still works: refusing the forgeries spent nothing.
    expect(await outcome(s, a.callback, a.expected)).toMatchObject({ ok: true });
  });

  it("refuses another connection's authorization (state_mismatch), and a verifier sealed for another authorization", async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_CA');
    const other = await startAuthorization(s, 'sso_authorization_CB');
    // The callback of A with the nonce and verifier kept for B, under A's state: the verifier does not open.
    const result = await outcome(s, a.callback, {
      authorizationId: 'sso_authorization_CA',
      oidcNonce: a.expected.oidcNonce,
      oidcCodeVerifierSealed: other.expected.oidcCodeVerifierSealed,
    });
    expect(result).toMatchObject({ ok: false, reason: 'state_mismatch' });
    // A second connection on the same provider: its configuration does not take A's callback.
    const second = await oidcSetup();
    idps.push(second.idp);
    await configureOidcConnection(second.scope, second.connectionId, {
      discovery_endpoint: second.idp.discoveryEndpoint,
      client_id: second.idp.clientId,
      client_secret: second.idp.clientSecret,
    });
    const mine = await startAuthorization(second, 'sso_authorization_CC');
    const crossed = await outcome(second, a.callback, mine.expected);
    expect(crossed.ok).toBe(false);
    // The callback's `iss` names the first provider: refused as another issuer before the state is compared.
    expect(['issuer_mismatch', 'state_mismatch']).toContain((crossed as { reason: string }).reason);
  });

  it('refuses the provider error answer (idp_error) with its code, not a stack', async () => {
    const s = await configured();
    const a = await startAuthorization(s, 'sso_authorization_ER');
    const callback = new URL(a.url);
    const answer = new URL(callback.searchParams.get('redirect_uri') as string);
    answer.searchParams.set('error', 'access_denied');
    answer.searchParams.set('error_description', 'End-User aborted interaction');
    answer.searchParams.set('state', 'sso_authorization_ER');
    answer.searchParams.set('iss', s.idp.issuer);
    const result = await outcome(s, answer, a.expected);
    expect(result).toMatchObject({
      ok: false,
      reason: 'idp_error',
      message: 'The identity provider answered access_denied: End-User aborted interaction',
    });
  });
});

describe('OIDC callback: nonce, PKCE and the code', () => {
  it('refuses an id_token whose nonce is not the authorization one (nonce_mismatch)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_N1');
    const result = await outcome(s, a.callback, Object.assign({}, a.expected, { oidcNonce: 'another-nonce' }));
    expect(result).toMatchObject({ ok: false, reason: 'nonce_mismatch' });
  });

  it('refuses an id_token re-signed by the provider with another nonce (nonce_mismatch)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_N2');
    s.idp.tamper = { claims: { nonce: 'replayed-nonce' } };
    expect(await outcome(s, a.callback, a.expected)).toMatchObject({ ok: false, reason: 'nonce_mismatch' });
  });

  it('sends the verifier; another verifier is refused by the provider (token_exchange_failed)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_P1');
    // The same authorization id started again: a verifier sealed for it, but not the one of the challenge.
    const again = await startAuthorization(s, 'sso_authorization_P1');
    const result = await outcome(
      s,
      a.callback,
      Object.assign({}, a.expected, { oidcCodeVerifierSealed: again.expected.oidcCodeVerifierSealed }),
    );
    expect(result).toMatchObject({ ok: false, reason: 'token_exchange_failed' });
    expect((result as { message: string }).message).toContain('invalid_grant');
    expect(s.idp.tokenRequests).toEqual([{ grantType: 'authorization_code', status: 400 }]);
  });

  it('refuses a replayed code (token_exchange_failed)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_R1');
    expect(await outcome(s, a.callback, a.expected)).toMatchObject({ ok: true });
    expect(await outcome(s, a.callback, a.expected)).toMatchObject({ ok: false, reason: 'token_exchange_failed' });
  });
});

describe('OIDC callback: the id_token', () => {
  const cases: [string, (s: OidcSetup) => IdTokenTamper, string][] = [
    ['another audience', () => ({ claims: { aud: 'someone-else' } }), 'audience_mismatch'],
    [
      'an extra audience without azp',
      (s) => ({ claims: { aud: [s.idp.clientId, 'someone-else'] } }),
      'audience_mismatch',
    ],
    [
      'an extra audience with another azp',
      (s) => ({ claims: { aud: [s.idp.clientId, 'someone-else'], azp: 'someone-else' } }),
      'audience_mismatch',
    ],
    ['another issuer', () => ({ claims: { iss: 'https://evil.example' } }), 'issuer_mismatch'],
    ['alg none', () => ({ signer: 'none' }), 'unexpected_algorithm'],
    ['HS256 keyed with the client secret', () => ({ signer: 'hs256-secret' }), 'unexpected_algorithm'],
    ['a key the provider does not publish', () => ({ signer: 'other', kid: 'unknown-kid' }), 'unknown_key'],
    ['another key under the published kid', () => ({ signer: 'other' }), 'invalid_signature'],
    [
      'an expiry past the 60 s skew',
      () => ({ claims: { exp: Math.floor(Date.now() / 1000) - 90, iat: Math.floor(Date.now() / 1000) - 400 } }),
      'expired',
    ],
    ['no subject', () => ({ claims: { sub: undefined } }), 'invalid_id_token'],
  ];

  it.each(cases)('refuses an id_token with %s', async (_name, tamper, reason) => {
    const s = await configured();
    const a = await signedIn(s, `sso_authorization_T${reason.length}`);
    s.idp.tamper = tamper(s);
    const result = await outcome(s, a.callback, a.expected);
    expect(result).toMatchObject({ ok: false, name: 'SsoFailure', reason });
    // No secret or token in what the SSO service records and shows.
    expect((result as { message: string }).message).not.toContain(s.idp.clientSecret);
    expect((result as { message: string }).message).not.toMatch(/eyJ/);
  });

  it('accepts an id_token that expired within the 60 s skew, and refuses it once our clock is past it', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_K1');
    const exp = Math.floor(Date.now() / 1000) - 30;
    s.idp.tamper = { claims: { exp } };
    expect(await outcome(s, a.callback, a.expected)).toMatchObject({ ok: true });
    // The same check on the service's clock (scope.now), not the process clock.
    const b = await signedIn(s, 'sso_authorization_K2');
    s.idp.tamper = { claims: {} };
    const later = scopeOf(s.env, s.env.deps, () => new Date(Date.now() + 3_600_000));
    expect(await outcome(s, b.callback, b.expected, later)).toMatchObject({ ok: false, reason: 'expired' });
  });
});

describe('OIDC: the address rules at sign-in', () => {
  it('refuses to reach a provider on a private address once the operator disallows it (provider_address_refused)', async () => {
    const s = await configured();
    const a = await signedIn(s, 'sso_authorization_AR');
    const before = s.idp.tokenRequests.length;
    const result = await outcome(s, a.callback, a.expected, scopeOf(s.env, publicOnly(s.env.deps)));
    expect(result).toMatchObject({ ok: false, reason: 'provider_address_refused' });
    expect(s.idp.tokenRequests.length).toBe(before);
  });
});
