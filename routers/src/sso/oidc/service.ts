import type { ConnectionRow } from '../../connections/store.ts';
import type { Scope } from '../../kernel/scope.ts';
import { seal, unseal } from '../../signing/material.ts';
import { SsoFailure, type SsoIdentity } from '../identity.ts';
import { oidcRedirectUri } from '../urls.ts';
import { codeVerifierContext, configurationOf, keepJwks, loadOpenIdClient, type OpenIdClient } from './client.ts';
import { AddressRefused } from './fetch.ts';
import { DEFAULT_CLAIM_MAPPING } from './schemas.ts';

export { configureOidcConnection } from './config.ts';
export type { OidcConfigInput } from './schemas.ts';

/**
 * The OpenID Connect side of a sign-in: the authorization request (`startOidc`) and the callback
 * (`consumeOidcCallback`). Protocol only: the SSO service (`../service.ts`) owns the authorization
 * row, its expiry and what a verified identity leads to.
 */

/**
 * The provider's authorization URL for one authorization: `state` is the authorization id, a
 * fresh `nonce`, PKCE S256 (the verifier is sealed, bound to the authorization).
 */
export async function startOidc(
  scope: Scope,
  connection: ConnectionRow,
  authorizationId: string,
  loginHint?: string,
): Promise<{ url: string; oidcNonce: string; oidcCodeVerifierSealed: string }> {
  const oidc = await loadOpenIdClient();
  const config = configurationOf(oidc, scope, connection);
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const parameters: Record<string, string> = {
    redirect_uri: oidcRedirectUri(scope.deps, connection.id),
    response_type: 'code',
    scope: connection.oidcScopes.join(' '),
    state: authorizationId,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (loginHint) parameters.login_hint = loginHint;
  const url = oidc.buildAuthorizationUrl(config, parameters);
  const sealed = seal(scope.deps.tokens.masterKey, codeVerifierContext(authorizationId), Buffer.from(verifier));
  return { url: url.href, oidcNonce: nonce, oidcCodeVerifierSealed: sealed };
}

/** The causes of an error, outermost first. */
function chainOf(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 6) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

const CLAIM_REASONS: Record<string, string> = {
  aud: 'audience_mismatch',
  azp: 'audience_mismatch',
  iss: 'issuer_mismatch',
  nonce: 'nonce_mismatch',
  sub: 'invalid_id_token',
  exp: 'expired',
  nbf: 'not_yet_valid',
  iat: 'invalid_id_token',
};

/**
 * The `SsoFailure` of an error of openid-client (its codes and the claim it names), with a reason
 * code that is stable and a message that carries no token, code or secret.
 */
export function failureOf(oidc: OpenIdClient, error: unknown): SsoFailure {
  if (error instanceof SsoFailure) return error;
  const chain = chainOf(error);
  for (const link of chain) {
    if (link instanceof AddressRefused) {
      return new SsoFailure(
        'provider_address_refused',
        `A request to the identity provider was refused: ${link.message}`,
      );
    }
    if ((link as { code?: unknown }).code === 'OAUTH_HTTP_REQUEST_FORBIDDEN') {
      return new SsoFailure(
        'provider_address_refused',
        'A request to the identity provider was refused: plain http goes only to loopback, where private addresses are allowed.',
      );
    }
    if (link instanceof oidc.AuthorizationResponseError) {
      const description = link.error_description ? `: ${link.error_description.slice(0, 200)}` : '';
      return new SsoFailure('idp_error', `The identity provider answered ${link.error.slice(0, 100)}${description}`);
    }
    if (link instanceof oidc.ResponseBodyError) {
      return new SsoFailure(
        'token_exchange_failed',
        `The identity provider's token endpoint refused the code (${link.error.slice(0, 100)}).`,
      );
    }
  }
  for (const link of chain) {
    if (!(link instanceof Error)) continue;
    const cause = link.cause as { claim?: unknown; alg?: unknown } | undefined;
    const claim = typeof cause?.claim === 'string' ? cause.claim : undefined;
    if (claim && CLAIM_REASONS[claim]) {
      return new SsoFailure(
        CLAIM_REASONS[claim] as string,
        `The id_token's "${claim}" claim was refused: ${link.message}.`,
      );
    }
    const message = link.message;
    if (/"state"/.test(message))
      return new SsoFailure('state_mismatch', `The callback's state was refused: ${message}.`);
    if (/"iss" \(issuer\) response parameter/.test(message)) {
      return new SsoFailure('issuer_mismatch', `The callback's iss was refused: ${message}.`);
    }
    if (/"alg"|unsupported JWS/.test(message)) {
      return new SsoFailure('unexpected_algorithm', `The id_token's algorithm was refused: ${message}.`);
    }
    if (/signature verification failed/.test(message)) {
      return new SsoFailure('invalid_signature', "The id_token's signature does not verify with the provider's keys.");
    }
    if (/selecting a JWT verification key/.test(message)) {
      return new SsoFailure(
        'unknown_key',
        `The id_token is signed with a key the provider does not publish: ${message}.`,
      );
    }
    if (/id_token/i.test(message) && /missing|expected/.test(message)) {
      return new SsoFailure('invalid_id_token', `The token response was refused: ${message}.`);
    }
  }
  const top = error instanceof Error ? error.message : 'unknown error';
  return new SsoFailure('invalid_id_token', `The identity provider's answer was refused: ${top}`);
}

/** A claim by name, or by dotted path into nested claims. */
function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number') return String(value);
  return undefined;
}

function list(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string' && value !== '') return [value];
  return undefined;
}

/** Claims that belong to the protocol, not to the person: not kept in `raw_attributes`. */
const PROTOCOL_CLAIMS = new Set(['nonce', 'at_hash', 'c_hash', 's_hash', 'sid']);

/**
 * The person the claims describe, through the connection's claim mapping (defaults: `sub`,
 * `email`, `given_name`, `family_name`, `name`, `groups`).
 *
 * `email_verified: false` is refused (`email_not_verified`), not marked: the SSO service matches
 * and provisions users by e-mail under the organization's domain policy, so an address the
 * provider itself has not verified could claim someone else's account. A provider that does not
 * send the claim (Entra ID) is trusted for the addresses it issues.
 */
export function identityOf(connection: ConnectionRow, claims: Record<string, unknown>): SsoIdentity {
  const mapping = connection.attributeMapping;
  const field = (name: keyof typeof DEFAULT_CLAIM_MAPPING) =>
    claimAt(claims, mapping[name] ?? DEFAULT_CLAIM_MAPPING[name]);
  const idpId = text(field('idp_id'));
  if (!idpId) throw new SsoFailure('missing_claim', 'The identity provider sent no subject (sub) for the person.');
  const email = text(field('email'));
  if (!email) {
    throw new SsoFailure(
      'missing_email',
      `The identity provider sent no e-mail address (claim "${mapping.email ?? DEFAULT_CLAIM_MAPPING.email}"), in the id_token or from userinfo.`,
    );
  }
  if (claims.email_verified === false || claims.email_verified === 'false') {
    throw new SsoFailure('email_not_verified', 'The identity provider says the e-mail address is not verified.');
  }
  const raw: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) if (!PROTOCOL_CLAIMS.has(name)) raw[name] = value;
  const identity: SsoIdentity = { idpId, email: email.toLowerCase(), customAttributes: {}, rawAttributes: raw };
  const firstName = text(field('first_name'));
  if (firstName !== undefined) identity.firstName = firstName;
  const lastName = text(field('last_name'));
  if (lastName !== undefined) identity.lastName = lastName;
  const name = text(field('name'));
  if (name !== undefined) identity.name = name;
  const groups = list(field('groups'));
  if (groups !== undefined) identity.groups = groups;
  for (const [attribute, claim] of Object.entries(mapping.custom ?? {})) {
    const value = claimAt(claims, claim);
    if (value !== undefined) identity.customAttributes[attribute] = value;
  }
  return identity;
}

/**
 * The provider's answer at the callback: the code exchanged with PKCE, the state and nonce of the
 * authorization checked, the id_token verified by openid-client (`iss`, `aud`, `azp`, algorithm,
 * signature with the provider's JWKS, `exp` with a 60 s skew), userinfo merged when the id_token
 * has no e-mail. Throws `SsoFailure`.
 */
export async function consumeOidcCallback(
  scope: Scope,
  connection: ConnectionRow,
  callbackUrl: URL,
  expected: { authorizationId: string; oidcNonce: string; oidcCodeVerifierSealed: string },
): Promise<SsoIdentity> {
  const oidc = await loadOpenIdClient();
  const config = configurationOf(oidc, scope, connection);
  // The redirect_uri sent with the code is the one of the authorization request, whatever host
  // or proxy the callback came through; only the callback's parameters are read.
  const current = new URL(oidcRedirectUri(scope.deps, connection.id));
  for (const [name, value] of callbackUrl.searchParams) current.searchParams.append(name, value);
  let verifier: string;
  try {
    verifier = unseal(
      scope.deps.tokens.masterKey,
      codeVerifierContext(expected.authorizationId),
      expected.oidcCodeVerifierSealed,
      'PKCE code verifier',
    ).toString();
  } catch {
    throw new SsoFailure('state_mismatch', 'The PKCE verifier does not belong to this authorization.');
  }
  try {
    const tokens = await oidc.authorizationCodeGrant(config, current, {
      expectedState: expected.authorizationId,
      expectedNonce: expected.oidcNonce,
      pkceCodeVerifier: verifier,
      idTokenExpected: true,
    });
    const idToken = tokens.claims();
    if (!idToken) throw new SsoFailure('invalid_id_token', 'The token endpoint returned no id_token.');
    const claims: Record<string, unknown> = Object.assign({}, idToken);
    const emailClaim = connection.attributeMapping.email ?? DEFAULT_CLAIM_MAPPING.email;
    const userinfoEndpoint = config.serverMetadata().userinfo_endpoint;
    if (text(claimAt(claims, emailClaim)) === undefined && userinfoEndpoint) {
      // The id_token's claims win: they are signed; userinfo only fills what it lacks.
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
      for (const [name, value] of Object.entries(userinfo)) if (!(name in claims)) claims[name] = value;
    }
    return identityOf(connection, claims);
  } catch (error) {
    throw failureOf(oidc, error);
  } finally {
    keepJwks(oidc, connection, config);
  }
}
