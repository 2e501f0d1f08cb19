// Setting a connection up (admin procedures, the CLI, the console and the admin portal): the
// protocol modules configure, this adds what the IT admin pastes into the identity provider.
import type { z } from 'zod';
import type { Connection, CreateConnectionInput } from '../connections/schemas.ts';
import { createConnection, toConnection } from '../connections/service.ts';
import { type ConnectionRow, loadConnection } from '../connections/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { configureOidcConnection, type OidcConfigInput } from './oidc/service.ts';
import { configureSamlConnection, isSamlType, type SamlConfigInput } from './saml/config.ts';
import { oidcRedirectUri, samlAcsUrl, samlSpEntityId, samlSpMetadataUrl } from './urls.ts';

/** A connection with the service-provider facts of its protocol (never a secret). */
export type ConnectionSetup = Connection & {
  saml_acs_url?: string;
  saml_sp_entity_id?: string;
  saml_sp_metadata_url?: string;
  oidc_redirect_uri?: string;
};

/** True for connection types the OIDC module serves (`GenericOIDC`, `OktaOIDC`, `AdpOidc`, ...). */
export function isOidcType(connectionType: string): boolean {
  return /(OIDC|Oidc)$/.test(connectionType);
}

/** The SP facts of a connection: the ACS URL, entity id and metadata URL (SAML) or the redirect URI (OIDC). */
export function withSpFacts(deps: Deps, connection: Connection): ConnectionSetup {
  const setup: ConnectionSetup = Object.assign({}, connection);
  if (isSamlType(connection.connection_type)) {
    setup.saml_acs_url = samlAcsUrl(deps, connection.id);
    setup.saml_sp_entity_id = samlSpEntityId(deps, connection.id);
    setup.saml_sp_metadata_url = samlSpMetadataUrl(deps, connection.id);
  } else if (isOidcType(connection.connection_type)) {
    setup.oidc_redirect_uri = oidcRedirectUri(deps, connection.id);
  }
  return setup;
}

/**
 * What an operator sees of a connection's configuration (the console, `connections get`): the
 * IdP side and the options, never a secret (an OIDC client secret only as `client_secret_set`).
 */
export interface ConnectionConfiguration {
  saml?: {
    idp_entity_id: string | null;
    idp_sso_url: string | null;
    idp_metadata_url: string | null;
    idp_certificates: { fingerprint_sha256: string; not_before: string; not_after: string }[];
    sign_requests: boolean;
    idp_initiated_enabled: boolean;
  };
  oidc?: {
    issuer: string | null;
    discovery_endpoint: string | null;
    client_id: string | null;
    client_secret_set: boolean;
    scopes: string[];
  };
  last_sign_in_at: string | null;
}

function configurationOf(row: ConnectionRow): ConnectionConfiguration {
  const configuration: ConnectionConfiguration = { last_sign_in_at: row.lastSignInAt?.toISOString() ?? null };
  if (isSamlType(row.connectionType)) {
    configuration.saml = {
      idp_entity_id: row.samlIdpEntityId,
      idp_sso_url: row.samlIdpSsoUrl,
      idp_metadata_url: row.samlIdpMetadataUrl,
      idp_certificates: row.samlIdpCertificates.map((c) => ({
        fingerprint_sha256: c.fingerprint_sha256,
        not_before: c.not_before,
        not_after: c.not_after,
      })),
      sign_requests: row.samlSignRequests,
      idp_initiated_enabled: row.samlIdpInitiatedEnabled,
    };
  } else if (isOidcType(row.connectionType)) {
    configuration.oidc = {
      issuer: row.oidcIssuer,
      discovery_endpoint: row.oidcDiscoveryEndpoint,
      client_id: row.oidcClientId,
      client_secret_set: row.oidcClientSecretSealed !== null,
      scopes: row.oidcScopes,
    };
  }
  return configuration;
}

/** A connection, its SP facts and its configuration (admin only). */
export async function getConnectionSetup(
  scope: Scope,
  id: string,
): Promise<ConnectionSetup & { configuration: ConnectionConfiguration }> {
  const row = await loadConnection(scope.db, scope.env.id, id);
  return Object.assign(withSpFacts(scope.deps, toConnection(row)), { configuration: configurationOf(row) });
}

/** Configures a SAML connection (sso/saml/config.ts) and adds its SP facts. */
export async function configureSaml(scope: Scope, id: string, input: SamlConfigInput): Promise<ConnectionSetup> {
  return withSpFacts(scope.deps, await configureSamlConnection(scope, id, input));
}

/** Configures an OpenID Connect connection (sso/oidc) and adds its redirect URI; the secret is never returned. */
export async function configureOidc(scope: Scope, id: string, input: OidcConfigInput): Promise<ConnectionSetup> {
  return withSpFacts(scope.deps, await configureOidcConnection(scope, id, input));
}

export interface CreateConfiguredInput extends z.output<typeof CreateConnectionInput> {
  saml?: SamlConfigInput | undefined;
  oidc?: OidcConfigInput | undefined;
}

/**
 * Creates a connection and, when given, configures it, in one transaction: a configuration the
 * protocol module refuses (bad metadata, a refused URL) leaves neither the connection nor its
 * events behind. A configuration on a connection of the other protocol is 422.
 */
export async function createConfiguredConnection(scope: Scope, input: CreateConfiguredInput): Promise<ConnectionSetup> {
  if (input.saml !== undefined && !isSamlType(input.connection_type)) {
    const message = `A SAML configuration needs a SAML connection type, not ${input.connection_type}.`;
    throw invalid([{ field: 'connection_type', code: 'invalid', message }]);
  }
  if (input.oidc !== undefined && !isOidcType(input.connection_type)) {
    const message = `An OpenID Connect configuration needs an OIDC connection type, not ${input.connection_type}.`;
    throw invalid([{ field: 'connection_type', code: 'invalid', message }]);
  }
  return scope.db.transaction(async (tx) => {
    const inner: Scope = Object.assign({}, scope, { db: tx });
    const created = await createConnection(inner, input);
    if (input.saml !== undefined) return configureSaml(inner, created.id, input.saml);
    if (input.oidc !== undefined) return configureOidc(inner, created.id, input.oidc);
    return withSpFacts(scope.deps, created);
  });
}
