import type { ConnectionType, SamlCertificate, SsoAuthorizationState } from '@atrium/db';
import { type Connection, CreateConnectionInput } from '../../connections/schemas.ts';
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  renameConnection,
  toConnection,
} from '../../connections/service.ts';
import { type ConnectionRow, connectionsOfOrganization } from '../../connections/store.ts';
import { invalid, invalidOfZod, notFound } from '../../kernel/errors.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import { PORTAL_SSO_READ } from '../../portal/service.ts';
import { quotaLimit } from '../../quotas.ts';
import { type LastSession, lastSessionsOf } from '../../sso/store.ts';

/**
 * Atrium's SSO connection types (SAML and OpenID Connect) and their spelling in the widgets' REST
 * (2.2, with the `providerTag` they belong to). Every other connection type (OAuth, magic link)
 * is not an SSO connection: the client surfaces neither list nor show it.
 */
const SSO_TYPES = {
  ADFSSAML: ['Saml', 'AdfsSaml'],
  AzureSAML: ['Saml', 'AzureSaml'],
  CasSAML: ['Saml', 'CasSaml'],
  ClassLinkSAML: ['Saml', 'ClassLinkSaml'],
  CloudflareSAML: ['Saml', 'CloudflareSaml'],
  CyberArkSAML: ['Saml', 'CyberArkSaml'],
  DuoSAML: ['Saml', 'DuoSaml'],
  GenericSAML: ['Saml', 'GenericSaml'],
  GoogleSAML: ['Saml', 'GoogleSaml'],
  JumpCloudSAML: ['Saml', 'JumpCloudSaml'],
  KeycloakSAML: ['Saml', 'KeycloakSaml'],
  LastPassSAML: ['Saml', 'LastPassSaml'],
  MiniOrangeSAML: ['Saml', 'MiniOrangeSaml'],
  NetIqSAML: ['Saml', 'NetIqSaml'],
  OktaSAML: ['Saml', 'OktaSaml'],
  OneLoginSAML: ['Saml', 'OneLoginSaml'],
  OracleSAML: ['Saml', 'OracleSaml'],
  PingFederateSAML: ['Saml', 'PingFederateSaml'],
  PingOneSAML: ['Saml', 'PingOneSaml'],
  RipplingSAML: ['Saml', 'RipplingSaml'],
  SalesforceSAML: ['Saml', 'SalesforceSaml'],
  ShibbolethGenericSAML: ['Saml', 'ShibbolethGenericSaml'],
  ShibbolethSAML: ['Saml', 'ShibbolethSaml'],
  SimpleSamlPhpSAML: ['Saml', 'SimpleSamlPhpSaml'],
  VMwareSAML: ['Saml', 'VmWareSaml'],
  AdpOidc: ['OpenIdConnect', 'AdpOidc'],
  CleverOIDC: ['OpenIdConnect', 'CleverOidc'],
  EntraIdOIDC: ['OpenIdConnect', 'EntraIdOidc'],
  GenericOIDC: ['OpenIdConnect', 'GenericOidc'],
  LoginGovOidc: ['OpenIdConnect', 'LoginGovOidc'],
  OktaOIDC: ['OpenIdConnect', 'OktaOidc'],
} as const satisfies Partial<Record<ConnectionType, readonly ['Saml' | 'OpenIdConnect', string]>>;

export type SsoType = keyof typeof SSO_TYPES;
export const SSO_TYPE_NAMES = Object.keys(SSO_TYPES) as SsoType[];
const isSsoType = (type: string): type is SsoType => Object.hasOwn(SSO_TYPES, type);

/** 4 ConnectionState (REST's SsoConnection state is the same list). */
export const CONNECTION_STATES = ['Active', 'Deleting', 'Inactive', 'Validating'] as const;

/** An SSO connection as GraphQL and `client.sso.*` show it (4 Connection). */
export interface ClientConnection {
  id: string;
  name: string;
  organizationId: string;
  /** Atrium's (and 4's) spelling: `OktaSAML`, `GenericOIDC`, ... */
  type: SsoType;
  state: 'Active' | 'Inactive';
  setupComplete: boolean;
  createdAt: string;
  updatedAt: string;
}

function toClientConnection(c: Connection): ClientConnection | undefined {
  if (!isSsoType(c.connection_type)) return undefined;
  const state = c.state === 'active' ? 'Active' : 'Inactive';
  return {
    id: c.id,
    name: c.name,
    organizationId: c.organization_id,
    type: c.connection_type,
    state,
    setupComplete: state === 'Active',
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  };
}

/** 2.2 X509: an IdP signing certificate of a SAML connection, with its validity. */
export interface WidgetCertificate {
  id: string;
  value: string;
  notBefore: string;
  notAfter: string;
}

/** `sso_authorizations.state` in the widget's spelling (2.2 lastSession.state). */
const SESSION_STATES = {
  started: 'Started',
  successful: 'Successful',
  failed: 'Failed',
  timed_out: 'Timedout',
} as const satisfies Record<SsoAuthorizationState, string>;

function toCertificate(c: SamlCertificate): WidgetCertificate {
  return { id: c.fingerprint_sha256, value: c.pem, notBefore: c.not_before, notAfter: c.not_after };
}

/**
 * The certificates' summary the widget draws its state from: `latestExpiringCertificate` is the
 * valid certificate that expires last (during a rotation the new one, so an old certificate about
 * to expire raises no warning); `latestExpiredCertificate` is the last one to expire, set only
 * when no certificate is valid any more (sign-in then fails: the widget's "Requires action").
 */
export function certificateSummary(certificates: SamlCertificate[], now: Date) {
  const byExpiry = certificates.toSorted((a, b) => Date.parse(b.not_after) - Date.parse(a.not_after));
  const valid = byExpiry.filter((c) => Date.parse(c.not_after) > now.getTime());
  const latestExpiring = valid[0];
  const latestExpired = valid.length === 0 ? byExpiry[0] : undefined;
  return {
    x509Certificates: certificates.map(toCertificate),
    latestExpiringCertificate: latestExpiring ? toCertificate(latestExpiring) : null,
    latestExpiredCertificate: latestExpired ? toCertificate(latestExpired) : null,
  };
}

/**
 * 2.2 SsoConnection for the widget: `providerTag` and `type` in REST's spelling; a SAML
 * connection's IdP certificates with their validity; `lastSession` is the connection's newest
 * sign-in attempt.
 */
export function toWidgetConnection(c: ClientConnection, row: ConnectionRow, last: LastSession | undefined, now: Date) {
  const [providerTag, type] = SSO_TYPES[c.type];
  const lastSession = last
    ? { id: last.id, createdAt: last.createdAt.toISOString(), state: SESSION_STATES[last.state] }
    : null;
  const base = { id: c.id, name: c.name, type, state: c.state, createdAt: c.createdAt, lastSession };
  if (providerTag === 'OpenIdConnect') return { ...base, providerTag };
  return Object.assign(base, { providerTag }, certificateSummary(row.samlIdpCertificates, now));
}

/**
 * The widget's list (row 18): the organization's SSO connections newest first (at most the
 * connection quota), each with its certificates and last sign-in attempt.
 */
export async function listWidgetSsoConnections(scope: ClientScope) {
  requireRead(scope);
  const limit = quotaLimit(scope.deps, 'connectionsPerOrganization');
  const rows = await connectionsOfOrganization(scope.db, scope.env.id, scope.client.organizationId, limit);
  const sso = rows.flatMap((row) => {
    const client = toClientConnection(toConnection(row));
    return client ? [{ client, row }] : [];
  });
  const sessions = await lastSessionsOf(
    scope.db,
    scope.env.id,
    sso.map((c) => c.row.id),
  );
  const now = scope.now();
  return sso.map(({ client, row }) => toWidgetConnection(client, row, sessions.get(row.id), now));
}

const PERMISSION = 'widgets:sso:manage';

/** Reading needs the widget's scope, or the admin portal SSO page's read-only one (portal/service.ts). */
function requireRead(scope: ClientScope): void {
  if (!scope.client.permissions.includes(PORTAL_SSO_READ)) requirePermission(scope, PERMISSION);
}

/**
 * The SSO connection of the token's organization, or 404 as if absent (another organization's,
 * an OAuth one), for a caller that may read (`write`: change) connections.
 */
async function ownConnection(scope: ClientScope, id: string, write: boolean): Promise<ClientConnection> {
  if (write) requirePermission(scope, PERMISSION);
  else requireRead(scope);
  const connection = await getConnection(scope, id);
  const client =
    connection.organization_id === scope.client.organizationId ? toClientConnection(connection) : undefined;
  if (!client) throw notFound('connection', id);
  return client;
}

/** The organization's SSO connections, newest first (at most the connection quota). */
export async function listSsoConnections(scope: ClientScope): Promise<ClientConnection[]> {
  requireRead(scope);
  const limit = quotaLimit(scope.deps, 'connectionsPerOrganization');
  const page = await listConnections(scope, { organization_id: scope.client.organizationId, limit, order: 'desc' });
  return page.data.flatMap((c) => toClientConnection(c) ?? []);
}

export const getSsoConnection = (scope: ClientScope, id: string) => ownConnection(scope, id, false);

/**
 * Starts an SSO connection of the organization (event `connection.created`): `inactive` until
 * it is set up (the widget's "Setup in progress"). Types Atrium does not store are 422.
 */
export async function createSsoConnection(
  scope: ClientScope,
  input: { type: string; name?: string | null | undefined },
): Promise<ClientConnection> {
  requirePermission(scope, PERMISSION);
  if (!isSsoType(input.type)) {
    const message = `Atrium does not support SSO connections of type '${input.type}'.`;
    throw invalid(
      [{ field: 'type', code: 'connection_type_unsupported', message }],
      'connection_type_unsupported',
      message,
    );
  }
  // The API's own rules of a connection (name 1-256 characters, trimmed); a missing name is the type.
  const parsed = CreateConnectionInput.safeParse({
    organization_id: scope.client.organizationId,
    connection_type: input.type,
    name: input.name ?? input.type,
    state: 'inactive',
  });
  if (!parsed.success) throw invalidOfZod(parsed.error);
  const created = await createConnection(scope, parsed.data);
  return toClientConnection(created) as ClientConnection;
}

/** Renames an SSO connection of the organization (event `connection.updated`); no name changes nothing. */
export async function updateSsoConnection(
  scope: ClientScope,
  input: { id: string; name?: string | null | undefined },
): Promise<ClientConnection> {
  const current = await ownConnection(scope, input.id, true);
  if (input.name === undefined || input.name === null) return current;
  const name = CreateConnectionInput.shape.name.safeParse(input.name);
  if (!name.success) throw invalidOfZod({ issues: name.error.issues.map((i) => ({ ...i, path: ['name'] })) });
  return toClientConnection(await renameConnection(scope, input.id, name.data)) as ClientConnection;
}

/** Deletes an SSO connection of the organization (event `connection.deleted`); its id. */
export async function deleteSsoConnection(scope: ClientScope, id: string): Promise<string> {
  await ownConnection(scope, id, true);
  return (await deleteConnection(scope, id)).id;
}
