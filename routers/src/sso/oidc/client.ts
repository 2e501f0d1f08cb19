import type { ClientAuth, ClientMetadata, Configuration, CustomFetch, ServerMetadata } from 'openid-client';
import type { ConnectionRow } from '../../connections/store.ts';
import type { Scope } from '../../kernel/scope.ts';
import { lazy } from '../../lib/lazy.ts';
import { unseal } from '../../signing/material.ts';
import { SsoFailure } from '../identity.ts';
import { providerFetch } from './fetch.ts';

/**
 * The openid-client `Configuration` of a connection, built from what its row keeps (the discovery
 * document fetched when it was configured, the client id, the sealed secret): no discovery request
 * per sign-in. Every request it makes goes through `providerFetch` (the address rules).
 */

/** openid-client, loaded with the first OIDC sign-in or configuration. */
export type OpenIdClient = typeof import('openid-client');
export const loadOpenIdClient = lazy(() => import('openid-client'));

/** Clock skew tolerated on `exp` and `nbf` of an id_token unless configured (the SSO design's 60 s). */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 60;

/** How long one request to the provider may take. */
const REQUEST_TIMEOUT_SECONDS = 10;

/**
 * The id_token algorithms Atrium accepts: asymmetric signatures, checked with the provider's JWKS.
 * `none` is never accepted, nor HS256/384/512 (a MAC keyed with the client secret proves nothing
 * about the provider, and the secret is typed into consoles and portals by people).
 */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** The algorithms of the provider's discovery document that Atrium accepts (RS256 when it names none). */
export function acceptedAlgorithms(metadata: Record<string, unknown>): string[] {
  const listed = metadata.id_token_signing_alg_values_supported;
  if (!Array.isArray(listed)) return ['RS256'];
  return ASYMMETRIC_ALGORITHMS.filter((alg) => listed.includes(alg));
}

/** What the client secret is bound to when sealed: the connection (a sealed value cannot move rows). */
export function clientSecretContext(connectionId: string): string {
  return `${connectionId}:oidc_client_secret`;
}

/** What the PKCE verifier is bound to when sealed: the authorization it belongs to. */
export function codeVerifierContext(authorizationId: string): string {
  return `${authorizationId}:oidc_code_verifier`;
}

/** Whether the operator lets outbound requests reach private and loopback addresses. */
export function allowsPrivate(scope: Scope): boolean {
  return scope.deps.config.webhooksAllowPrivate === true;
}

/** The transport options every openid-client call of this module uses. */
export function transportOf(scope: Scope) {
  const allowPrivate = allowsPrivate(scope);
  return {
    fetch: providerFetch(allowPrivate) as unknown as CustomFetch,
    // openid-client refuses http by default; loopback providers (tests, `dev-idp`) need it, and
    // only where the operator allowed private addresses (providerFetch still limits http to loopback).
    insecure: allowPrivate,
  };
}

function clientAuthentication(
  oidc: OpenIdClient,
  metadata: Record<string, unknown>,
  secret: string | undefined,
): ClientAuth {
  if (secret === undefined) return oidc.None();
  const methods = metadata.token_endpoint_auth_methods_supported;
  // client_secret_basic is the default of the specification when the provider lists none.
  if (!Array.isArray(methods) || methods.includes('client_secret_basic')) return oidc.ClientSecretBasic(secret);
  return oidc.ClientSecretPost(secret);
}

/**
 * Each connection's JWKS as last fetched, kept across sign-ins (a `Configuration` lives for one
 * sign-in): openid-client trusts it 5 minutes and fetches again at once for an unknown `kid` once
 * it is a minute old. Keyed by connection and `jwks_uri`; the oldest entry goes past the bound.
 */
const jwksCaches = new Map<string, ExportedJWKSCache>();
const JWKS_CACHE_ENTRIES = 1_000;
type ExportedJWKSCache = NonNullable<ReturnType<OpenIdClient['getJwksCache']>>;

function jwksCacheKey(connection: ConnectionRow): string {
  return `${connection.id} ${String(connection.oidcMetadata?.jwks_uri ?? '')}`;
}

/** Keeps what the sign-in's configuration fetched of the provider's JWKS for the next sign-in. */
export function keepJwks(oidc: OpenIdClient, connection: ConnectionRow, config: Configuration): void {
  const fetched = oidc.getJwksCache(config);
  if (!fetched) return;
  const key = jwksCacheKey(connection);
  jwksCaches.delete(key);
  jwksCaches.set(key, fetched);
  if (jwksCaches.size > JWKS_CACHE_ENTRIES) jwksCaches.delete(jwksCaches.keys().next().value as string);
}

/** The configuration of a configured connection; `SsoFailure('connection_not_configured')` otherwise. */
export function configurationOf(oidc: OpenIdClient, scope: Scope, connection: ConnectionRow): Configuration {
  const metadata = connection.oidcMetadata;
  if (!metadata || !connection.oidcClientId || !connection.oidcIssuer) {
    throw new SsoFailure(
      'connection_not_configured',
      `Connection ${connection.id} has no OpenID Connect configuration.`,
    );
  }
  const secret = connection.oidcClientSecretSealed
    ? unseal(
        scope.deps.tokens.masterKey,
        clientSecretContext(connection.id),
        connection.oidcClientSecretSealed,
        'OIDC client secret',
      ).toString('utf8')
    : undefined;
  const skewSeconds = Math.round((scope.now().getTime() - Date.now()) / 1000);
  const client: Partial<ClientMetadata> = {
    // openid-client compares the header's `alg` with this list (an array is accepted at runtime).
    id_token_signed_response_alg: acceptedAlgorithms(metadata) as unknown as string,
    [oidc.clockSkew]: skewSeconds,
    // The same skew as SAML's (`ATRIUM_SSO_CLOCK_SKEW_SECONDS`).
    [oidc.clockTolerance]: scope.deps.config.ssoClockSkewSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
  };
  if (secret !== undefined) client.client_secret = secret;
  const config = new oidc.Configuration(
    metadata as unknown as ServerMetadata,
    connection.oidcClientId,
    client,
    clientAuthentication(oidc, metadata, secret),
  );
  const transport = transportOf(scope);
  config[oidc.customFetch] = transport.fetch;
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  if (transport.insecure) oidc.allowInsecureRequests(config);
  // Verify the id_token's signature with the provider's JWKS, although it came over TLS from the
  // token endpoint: a wrong key is refused, not trusted for its channel.
  oidc.enableNonRepudiationChecks(config);
  const jwks = jwksCaches.get(jwksCacheKey(connection));
  if (jwks) oidc.setJwksCache(config, jwks);
  return config;
}
