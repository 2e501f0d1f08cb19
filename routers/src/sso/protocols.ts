import type { Db } from '@atrium/db';
import type { ConnectionRow } from '../connections/store.ts';
import type { Deps } from '../kernel/deps.ts';
import type { Scope } from '../kernel/scope.ts';
import type { AnswerUse, SsoIdentity } from './identity.ts';
import { SsoFailure } from './identity.ts';
import * as oidc from './oidc/service.ts';
import * as saml from './saml/service.ts';

// The dispatch from a connection to its protocol module (SAML in `saml/`, OIDC in `oidc/`): the
// SSO service and the browser codec call these, never a module directly.

export type SsoProtocol = 'saml' | 'oidc';

/**
 * The protocol a connection signs in with, or undefined when Atrium cannot broker it: a type
 * ending in `SAML` is SAML; an `*OIDC`/`*Oidc` type is OIDC; an OAuth type only when an OpenID
 * client was configured on it.
 */
export function protocolOf(
  connection: Pick<ConnectionRow, 'connectionType' | 'oidcClientId'>,
): SsoProtocol | undefined {
  const type = connection.connectionType;
  if (type.endsWith('SAML')) return 'saml';
  if (/oidc$/i.test(type)) return 'oidc';
  if (type.endsWith('OAuth') && connection.oidcClientId) return 'oidc';
  return undefined;
}

/** Whether the connection has what its protocol needs to send a browser to the IdP. */
export function isConfigured(connection: ConnectionRow): boolean {
  const protocol = protocolOf(connection);
  if (protocol === 'saml') return Boolean(connection.samlIdpSsoUrl) && connection.samlIdpCertificates.length > 0;
  if (protocol === 'oidc')
    return Boolean(connection.oidcClientId && (connection.oidcIssuer || connection.oidcMetadata));
  return false;
}

/** The protocol state an authorization keeps for the IdP's answer. */
export interface StartedProtocol {
  url: string;
  samlRequestId?: string;
  oidcNonce?: string;
  oidcCodeVerifierSealed?: string;
}

/** Builds the IdP redirect of an authorization (`startSaml` or `startOidc`). */
export async function startProtocol(
  scope: Scope,
  connection: ConnectionRow,
  authorizationId: string,
  loginHint?: string,
): Promise<StartedProtocol> {
  const protocol = protocolOf(connection);
  if (protocol === 'saml') return saml.startSaml(scope, connection, authorizationId, loginHint);
  if (protocol === 'oidc') return oidc.startOidc(scope, connection, authorizationId, loginHint);
  throw new SsoFailure('unsupported_connection_type', `Connection type ${connection.connectionType} cannot sign in.`);
}

/** Verifies a SAML response; its assertion's one use comes back as `use`, for `rememberUse`. */
export async function consumeSaml(
  scope: Scope,
  connection: ConnectionRow,
  form: { SAMLResponse: string; RelayState?: string },
  expected: { samlRequestId: string } | null,
): Promise<SsoIdentity> {
  return saml.verifySamlResponse(scope, connection, form, expected);
}

/**
 * Remembers a verified answer's one use on `db` (the sign-in's transaction, or its refusal's);
 * false when the connection has accepted it before (a replay).
 */
export function rememberUse(db: Db, scope: Scope, connectionId: string, use: AnswerUse): Promise<boolean> {
  return saml.rememberSamlAssertion(db, scope, connectionId, use);
}

export async function consumeOidc(
  scope: Scope,
  connection: ConnectionRow,
  callbackUrl: URL,
  expected: { authorizationId: string; oidcNonce: string; oidcCodeVerifierSealed: string },
): Promise<SsoIdentity> {
  return oidc.consumeOidcCallback(scope, connection, callbackUrl, expected);
}

export async function samlMetadata(deps: Deps, connection: ConnectionRow): Promise<string> {
  return saml.samlMetadataXml(deps, connection);
}
