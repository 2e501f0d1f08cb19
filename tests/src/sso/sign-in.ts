// Helpers of the SSO core tests: a connection of an organization, an authorization in flight
// (as `GET /sso/authorize` writes it) and a verified identity as a protocol module returns it.
import { connections, newId, redirectUris, ssoAuthorizations } from '@atrium/db';
import { type ConnectionRow, loadConnection, type SsoIdentity, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { adminCaller } from '../helpers/tokens.ts';
import { type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

export const APP_CALLBACK = 'https://app.example.com/callback';

/** An organization with a verified domain (or none) and a SAML connection of it, `inactive`. */
export async function ssoSetup(
  env: TestEnvironment,
  options: { verified?: boolean; allowOutside?: boolean; type?: 'GenericSAML' | 'GenericOIDC' | 'GoogleOAuth' } = {},
) {
  const domain = uniqueDomain('sso');
  const organization = await env.caller.organizations.create({
    name: 'Acme',
    allow_profiles_outside_organization: options.allowOutside ?? false,
    domain_data: options.verified === false ? [] : [{ domain, state: 'verified' }],
  });
  const admin = await adminCaller();
  const made = await admin.connections.create({
    environment: env.environmentId,
    organization_id: organization.id,
    connection_type: options.type ?? 'GenericSAML',
    name: 'Acme IdP',
    state: 'inactive',
  });
  const scope = await scopeOf(env.deps, env.environmentId);
  const connection = await loadConnection(env.deps.db, env.environmentId, made.id);
  return { domain, organization, connection, scope, admin };
}

/** Registers a redirect URI straight in the table (the API is tested on its own). */
export async function registerRedirectUri(env: TestEnvironment, uri = APP_CALLBACK, isDefault = false) {
  await env.deps.db
    .insert(redirectUris)
    .values({ id: newId('redirectUri'), environmentId: env.environmentId, uri, isDefault });
}

/** An authorization in flight for the connection, as `beginAuthorization` writes it. */
export async function startedAuthorization(
  env: TestEnvironment,
  connection: ConnectionRow,
  options: { appState?: string; expiresAt?: Date; redirectUri?: string } = {},
): Promise<string> {
  const id = newId('ssoAuthorization');
  await env.deps.db.insert(ssoAuthorizations).values({
    id,
    environmentId: env.environmentId,
    connectionId: connection.id,
    redirectUri: options.redirectUri ?? APP_CALLBACK,
    appState: options.appState ?? null,
    samlRequestId: `_${id}`,
    expiresAt: options.expiresAt ?? new Date(Date.now() + 600_000),
  });
  return id;
}

/** A verified identity, as a protocol module hands it to the service. */
export function identity(email: string, overrides: Partial<SsoIdentity> = {}): SsoIdentity {
  return {
    idpId: `idp-${email}`,
    email,
    firstName: 'Ada',
    lastName: 'Lovelace',
    groups: ['engineering'],
    customAttributes: { department: 'R&D' },
    rawAttributes: { email, given_name: 'Ada', family_name: 'Lovelace', department: 'R&D' },
    ...overrides,
  };
}

/** Marks a connection as configured for SAML (what `configureSamlConnection` stores). */
export async function markConfiguredSaml(env: TestEnvironment, connectionId: string) {
  await env.deps.db
    .update(connections)
    .set({
      samlIdpEntityId: 'https://idp.example.com/entity',
      samlIdpSsoUrl: 'https://idp.example.com/sso',
      samlIdpCertificates: [{ pem: 'x', fingerprint_sha256: 'x', not_before: '2026-01-01', not_after: '2036-01-01' }],
    })
    .where(eq(connections.id, connectionId));
}
