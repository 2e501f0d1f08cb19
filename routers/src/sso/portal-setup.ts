// The admin portal's `sso` intent as a setup flow (web/src/portal/sso.ts draws it): the IT admin
// picks the identity provider, which makes an inactive connection of that type; the page shows
// the SP facts to paste into the provider and that provider's steps; the IdP metadata (XML pasted,
// or its URL) configures it through the SAML module, as the CLI and the console do; a test
// sign-in through `/sso/authorize` then activates it (the SSO service activates a connection on
// its first successful sign-in). Writes are cookie-authenticated and CSRF-checked
// (rest-facade/src/portal.ts). It lives beside the SSO service, which the portal does not import.

import { isSamlType, toConnection } from '../connections/service.ts';
import type { ConnectionRow } from '../connections/store.ts';
import { connectionsOfOrganization, loadConnection } from '../connections/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { forbidden, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import type { LivePortalSession } from '../portal/store.ts';
import { configureOidc, configureSaml, createConfiguredConnection, isOidcType, withSpFacts } from './setup.ts';
import { redirectUrisOf } from './store.ts';

/** The providers the sso page sets up, and the connection type each makes. */
export const PORTAL_SSO_PROVIDERS = {
  okta: 'OktaSAML',
  entra: 'AzureSAML',
  google: 'GoogleSAML',
  saml: 'GenericSAML',
  oidc: 'GenericOIDC',
} as const;
export type PortalSsoProvider = keyof typeof PORTAL_SSO_PROVIDERS;

/** What the sso page shows of a connection: its state, what to paste, its certificates, the test link. */
export interface PortalSsoConnection {
  id: string;
  name: string;
  type: string;
  state: string;
  /** True once the IdP's sign-in URL and at least one certificate are known. */
  configured: boolean;
  sp: { acs_url?: string; entity_id?: string; metadata_url?: string; redirect_uri?: string };
  idp: { entity_id: string | null; sso_url: string | null; metadata_url: string | null };
  certificates: { fingerprint_sha256: string; not_before: string; not_after: string; expired: boolean }[];
  /**
   * `/sso/authorize` for this connection, to the environment's default redirect URI: the code
   * goes to the application, as every sign-in's does (Atrium hands codes only to registered
   * redirect URIs); null until the connection is configured or without a default redirect URI.
   */
  test_sign_in_url: string | null;
  /** Why there is no test link, for the page. */
  test_sign_in_blocked: string | null;
}

const MAX_SHOWN = 50;

/** The Scope of a portal session: its environment, for the services it calls. */
const scopeOfSession = (deps: Deps, live: LivePortalSession): Scope => ({
  db: deps.db,
  env: live.env,
  now: deps.now,
  deps,
});

function toPortalConnection(deps: Deps, clientId: string, row: ConnectionRow, hasDefault: boolean, now: Date) {
  const facts = withSpFacts(deps, toConnection(row));
  const configured = isSamlType(row.connectionType)
    ? row.samlIdpSsoUrl !== null && row.samlIdpCertificates.length > 0
    : row.oidcClientId !== null && row.oidcIssuer !== null;
  const blocked = !configured
    ? 'Add the identity provider first.'
    : hasDefault
      ? null
      : 'The application has no default redirect URI yet; ask its developers to set one.';
  const base = deps.tokens.issuer.replace(/\/+$/, '');
  const query = new URLSearchParams({
    client_id: clientId,
    connection: row.id,
    response_type: 'code',
    state: 'atrium_portal_test',
  });
  const shown: PortalSsoConnection = {
    id: row.id,
    name: row.name,
    type: row.connectionType,
    state: row.state,
    configured,
    sp: {},
    idp: { entity_id: row.samlIdpEntityId, sso_url: row.samlIdpSsoUrl, metadata_url: row.samlIdpMetadataUrl },
    certificates: row.samlIdpCertificates.map((c) => ({
      fingerprint_sha256: c.fingerprint_sha256,
      not_before: c.not_before,
      not_after: c.not_after,
      expired: Date.parse(c.not_after) <= now.getTime(),
    })),
    test_sign_in_url: blocked === null ? `${base}/sso/authorize?${query}` : null,
    test_sign_in_blocked: blocked,
  };
  if (facts.saml_acs_url !== undefined) shown.sp.acs_url = facts.saml_acs_url;
  if (facts.saml_sp_entity_id !== undefined) shown.sp.entity_id = facts.saml_sp_entity_id;
  if (facts.saml_sp_metadata_url !== undefined) shown.sp.metadata_url = facts.saml_sp_metadata_url;
  if (facts.oidc_redirect_uri !== undefined) shown.sp.redirect_uri = facts.oidc_redirect_uri;
  return shown;
}

/** The organization's SAML and OIDC connections, newest first, as the sso page shows them. */
export async function portalSsoConnections(scope: Scope, organizationId: string): Promise<PortalSsoConnection[]> {
  const rows = (await connectionsOfOrganization(scope.db, scope.env.id, organizationId, MAX_SHOWN)).filter(
    (row) => isSamlType(row.connectionType) || isOidcType(row.connectionType),
  );
  const hasDefault = (await redirectUrisOf(scope.db, scope.env.id)).some((r) => r.isDefault);
  const now = scope.now();
  return rows.map((row) => toPortalConnection(scope.deps, scope.env.clientId, row, hasDefault, now));
}

/** The sso page's connections (`GET /portal/session/status` adds them on an sso session). */
export async function portalSsoStatus(deps: Deps, live: LivePortalSession): Promise<PortalSsoConnection[]> {
  requireSso(live);
  return portalSsoConnections(scopeOfSession(deps, live), live.session.organizationId);
}

function requireSso(live: LivePortalSession): void {
  if (live.session.intent !== 'sso') {
    throw forbidden('forbidden', 'This admin portal session may not set up single sign-on.');
  }
}

const fieldsOf = (body: unknown) => (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;

async function shownOne(scope: Scope, id: string, organizationId: string): Promise<PortalSsoConnection> {
  const shown = (await portalSsoConnections(scope, organizationId)).find((c) => c.id === id);
  if (!shown) throw notFound('connection', id);
  return shown;
}

/**
 * "Start": an inactive connection of the chosen provider's type for the session's organization
 * (422 for another provider; the connection quota applies). Only an sso session may (else 403).
 */
export async function startPortalSso(deps: Deps, live: LivePortalSession, body: unknown): Promise<PortalSsoConnection> {
  requireSso(live);
  const fields = fieldsOf(body);
  const provider = fields.provider;
  if (typeof provider !== 'string' || !Object.hasOwn(PORTAL_SSO_PROVIDERS, provider)) {
    const message = `provider must be one of: ${Object.keys(PORTAL_SSO_PROVIDERS).join(', ')}.`;
    throw invalid([{ field: 'provider', code: 'invalid_provider', message }], 'invalid_provider', message);
  }
  const type = PORTAL_SSO_PROVIDERS[provider as PortalSsoProvider];
  const name = typeof fields.name === 'string' && fields.name.trim() !== '' ? fields.name : type;
  const scope = scopeOfSession(deps, live);
  const created = await createConfiguredConnection(scope, {
    organization_id: live.session.organizationId,
    connection_type: type,
    name: name.trim().slice(0, 256),
    state: 'inactive',
  });
  return shownOne(scope, created.id, live.session.organizationId);
}

/**
 * "Save": a connection of the session's organization (another organization's, or a missing one,
 * is 404) configured by its protocol module: a SAML one from the IdP metadata (XML pasted, or its
 * URL); an OIDC one from the discovery endpoint, client id and secret (sealed, never shown). The
 * module's 422 (bad metadata, a refused URL, a failed discovery) changes nothing.
 */
export async function configurePortalSso(
  deps: Deps,
  live: LivePortalSession,
  id: string,
  body: unknown,
): Promise<PortalSsoConnection> {
  requireSso(live);
  const scope = scopeOfSession(deps, live);
  const row = await loadConnection(scope.db, scope.env.id, id).catch(() => undefined);
  const saml = row !== undefined && isSamlType(row.connectionType);
  const oidc = row !== undefined && isOidcType(row.connectionType);
  if (!row || row.organizationId !== live.session.organizationId || !(saml || oidc)) {
    throw notFound('connection', id);
  }
  const fields = fieldsOf(body);
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : '');
  if (oidc) {
    const input: { discovery_endpoint: string; client_id: string; client_secret?: string } = {
      discovery_endpoint: text('discovery_endpoint'),
      client_id: text('client_id'),
    };
    if (text('client_secret') !== '') input.client_secret = text('client_secret');
    await configureOidc(scope, id, input);
    return shownOne(scope, id, live.session.organizationId);
  }
  const xml = text('idp_metadata_xml');
  const url = text('idp_metadata_url');
  if ((xml === '') === (url === '')) {
    const message = 'Paste the metadata XML or give its URL (one of them).';
    throw invalid([{ field: 'idp_metadata_xml', code: 'required', message }], 'invalid_request_parameters', message);
  }
  await configureSaml(scope, id, xml !== '' ? { idp_metadata_xml: xml } : { idp_metadata_url: url });
  return shownOne(scope, id, live.session.organizationId);
}
