import type { AttributeMapping } from '@atrium/db';
import type { Configuration } from 'openid-client';
import { orNotFound } from '../../common/store.ts';
import type { Connection } from '../../connections/schemas.ts';
import { toConnection } from '../../connections/service.ts';
import { loadConnection, lockConnection, updateConfiguration } from '../../connections/store.ts';
import { recordEvent } from '../../events/record.ts';
import { invalid, invalidOfZod } from '../../kernel/errors.ts';
import type { Scope } from '../../kernel/scope.ts';
import { seal } from '../../signing/material.ts';
import {
  ASYMMETRIC_ALGORITHMS,
  acceptedAlgorithms,
  clientSecretContext,
  loadOpenIdClient,
  transportOf,
} from './client.ts';
import { AddressRefused, refusalOf } from './fetch.ts';
import { DEFAULT_SCOPES, OidcConfigInput } from './schemas.ts';

const WELL_KNOWN = '/.well-known/openid-configuration';

/** Connection types the OIDC module serves: `*OIDC`/`*Oidc`, and OAuth types configured as OIDC. */
export function isOidcCapable(connectionType: string): boolean {
  return /oidc$/i.test(connectionType) || /OAuth$/.test(connectionType);
}

const refused = (field: string, message: string) => invalid([{ field, code: 'invalid', message }]);

/** The message of an error and its causes, for a refusal the admin can act on (never a secret: discovery sends none). */
function causeOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth += 1) {
    if (current instanceof AddressRefused) return current.message;
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ') || 'unknown error';
}

/** The issuer a discovery URL names: the URL itself, or the URL without its well-known suffix. */
function issuerOfEndpoint(endpoint: URL): string {
  const href = endpoint.href;
  return href.endsWith(WELL_KNOWN) ? href.slice(0, -WELL_KNOWN.length) : href;
}

/** Reads and checks the provider's discovery document under the address rules. */
async function discover(scope: Scope, endpoint: URL, clientId: string): Promise<Record<string, unknown>> {
  const transport = transportOf(scope);
  const oidc = await loadOpenIdClient();
  let config: Configuration;
  try {
    config = await oidc.discovery(endpoint, clientId, undefined, oidc.None(), {
      [oidc.customFetch]: transport.fetch,
      execute: transport.insecure ? [oidc.allowInsecureRequests] : [],
      timeout: 10,
    });
  } catch (error) {
    throw refused('discovery_endpoint', `The discovery document could not be read: ${causeOf(error)}`);
  }
  const metadata = config.serverMetadata() as unknown as Record<string, unknown>;
  const issuer = metadata.issuer;
  // A well-known URL is read without openid-client's issuer check: the same check, here (OpenID
  // Connect Discovery 1.0 section 4.3). The id_token's `iss` is compared with this issuer.
  if (typeof issuer !== 'string' || issuer.replace(/\/+$/, '') !== issuerOfEndpoint(endpoint).replace(/\/+$/, '')) {
    throw refused(
      'discovery_endpoint',
      `The discovery document names the issuer ${JSON.stringify(issuer)}, not the one of its URL; use the issuer's own discovery endpoint (a tenant-specific one for multi-tenant providers).`,
    );
  }
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof metadata[name] !== 'string') {
      throw refused('discovery_endpoint', `The discovery document has no ${name}.`);
    }
  }
  for (const name of ['token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const) {
    const value = metadata[name];
    if (typeof value !== 'string') continue;
    const refusal = refusalOf(value, transport.insecure);
    if (refusal) throw refused('discovery_endpoint', `The provider's ${name}: ${refusal}`);
  }
  const authorization = new URL(metadata.authorization_endpoint as string);
  if (authorization.protocol !== 'https:' && !(transport.insecure && authorization.protocol === 'http:')) {
    throw refused('discovery_endpoint', "The provider's authorization_endpoint must use https.");
  }
  if (acceptedAlgorithms(metadata).length === 0) {
    throw refused(
      'discovery_endpoint',
      `The provider signs id_tokens only with ${JSON.stringify(metadata.id_token_signing_alg_values_supported)}; Atrium accepts ${ASYMMETRIC_ALGORITHMS.join(', ')}.`,
    );
  }
  return metadata;
}

/** `openid` first, each scope once. */
function scopesOf(requested: string[] | undefined): string[] {
  return [...new Set(['openid', ...(requested ?? DEFAULT_SCOPES)])];
}

/**
 * Configures a connection as OpenID Connect: reads the provider's discovery document (under the
 * webhook address rules), keeps its issuer and metadata on the row, the client id, the client
 * secret sealed under the master key (never returned, evented or logged), the scopes and the
 * claim mapping. Records `connection.updated`.
 *
 * An omitted `client_secret` keeps the stored one while the client id stays the same (a changed
 * client id without a secret is a public client); an omitted `claim_mapping` keeps the stored one.
 */
export async function configureOidcConnection(
  scope: Scope,
  connectionId: string,
  raw: OidcConfigInput,
): Promise<Connection> {
  const parsed = OidcConfigInput.safeParse(raw);
  if (!parsed.success) throw invalidOfZod(parsed.error);
  const input = parsed.data;
  // Checked before anything is read from the provider: a refused address is never contacted.
  const refusal = refusalOf(input.discovery_endpoint, transportOf(scope).insecure);
  if (refusal) throw refused('discovery_endpoint', `discovery_endpoint: ${refusal}`);
  const current = await loadConnection(scope.db, scope.env.id, connectionId);
  if (!isOidcCapable(current.connectionType)) {
    throw refused('connection_type', `A ${current.connectionType} connection cannot be configured as OpenID Connect.`);
  }
  const endpoint = new URL(input.discovery_endpoint);
  const metadata = await discover(scope, endpoint, input.client_id);

  return scope.db.transaction(async (tx) => {
    const locked = await lockConnection(tx, scope.env.id, connectionId);
    let secretSealed: string | null | undefined;
    if (input.client_secret !== undefined) {
      secretSealed = seal(
        scope.deps.tokens.masterKey,
        clientSecretContext(connectionId),
        Buffer.from(input.client_secret, 'utf8'),
      );
    } else if (locked.oidcClientId !== input.client_id) {
      secretSealed = null;
    }
    const mapping: AttributeMapping = input.claim_mapping ?? locked.attributeMapping;
    const row = orNotFound(
      await updateConfiguration(
        tx,
        scope.env.id,
        connectionId,
        {
          oidcIssuer: metadata.issuer as string,
          oidcDiscoveryEndpoint: endpoint.href,
          oidcMetadata: metadata,
          oidcClientId: input.client_id,
          oidcClientSecretSealed: secretSealed,
          oidcScopes: scopesOf(input.scopes),
          attributeMapping: mapping,
        },
        scope.now(),
      ),
      'connection',
      connectionId,
    );
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.updated', connection);
    return connection;
  });
}
