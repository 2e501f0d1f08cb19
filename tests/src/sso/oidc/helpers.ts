import { connections, events } from '@atrium/db';
import { type Deps, type Scope, startOidc } from '@atrium/routers';
import { and, eq, like } from 'drizzle-orm';
import { type OidcIdp, type OidcIdpOptions, startOidcIdp } from '../../helpers/oidc-idp.ts';
import { adminCaller, makeOrganization } from '../../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../../helpers/world.ts';

/** The scope a service function gets for the environment (with other deps, e.g. another config). */
export function scopeOf(env: TestEnvironment, deps: Deps = env.deps, now: () => Date = () => new Date()): Scope {
  return { db: deps.db, env: { id: env.environmentId, name: 'test', clientId: env.clientId, flags: {} }, now, deps };
}

/** The world's deps with private addresses refused (the operator's default). */
export function publicOnly(deps: Deps): Deps {
  return Object.assign({}, deps, { config: Object.assign({}, deps.config, { webhooksAllowPrivate: false }) });
}

/** The connection's row as stored. */
export async function connectionRow(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(connections).where(eq(connections.id, id));
  if (!row) throw new Error(`no connection ${id}`);
  return row;
}

export async function connectionEvents(env: TestEnvironment) {
  return env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'connection.%')))
    .orderBy(events.id);
}

/** The redirect URI a connection gets (`oidcRedirectUri`), from the world's issuer. */
export function redirectUriOf(deps: Deps, connectionId: string): string {
  return `${deps.tokens.issuer.replace(/\/+$/, '')}/sso/oidc/callback/${connectionId}`;
}

export interface OidcSetup {
  env: TestEnvironment;
  scope: Scope;
  organizationId: string;
  connectionId: string;
  idp: OidcIdp;
}

/** An environment, an organization, a GenericOIDC connection and a loopback provider with its client. */
export async function oidcSetup(
  idpOptions: Omit<OidcIdpOptions, 'redirectUris'> = {},
  connectionType: 'GenericOIDC' | 'OktaOIDC' | 'EntraIdOIDC' | 'GoogleOAuth' | 'OktaSAML' = 'GenericOIDC',
): Promise<OidcSetup> {
  const env = await newEnvironment();
  const organizationId = await makeOrganization(env, 'Acme');
  const admin = await adminCaller();
  const connection = await admin.connections.create({
    environment: env.environmentId,
    organization_id: organizationId,
    connection_type: connectionType,
    name: 'Acme IdP',
    state: 'inactive',
  });
  const idp = await startOidcIdp(Object.assign({ redirectUris: [redirectUriOf(env.deps, connection.id)] }, idpOptions));
  return { env, scope: scopeOf(env), organizationId, connectionId: connection.id, idp };
}

/** `startOidc` for an authorization id, and what the SSO service would keep for the callback. */
export async function startAuthorization(setup: OidcSetup, id: string, loginHint?: string) {
  const row = await connectionRow(setup.env, setup.connectionId);
  const started = await startOidc(setup.scope, row, id, loginHint);
  return {
    url: started.url,
    expected: {
      authorizationId: id,
      oidcNonce: started.oidcNonce,
      oidcCodeVerifierSealed: started.oidcCodeVerifierSealed,
    },
  };
}
