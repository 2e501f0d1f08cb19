// The shared setup of the live SSO flow tests (SAML against the dev IdP, OIDC against the
// loopback provider): an organization with a verified domain and a connection configured to the
// IdP, the IdP's login played as a person would, and the stored `authentication.sso_*` events.
import { type CONNECTION_TYPES, events } from '@atrium/db';
import { configureOidcConnection, configureSamlConnection, type Deps, scopeOf } from '@atrium/routers';
import type { DevIdp } from '@atrium/server';
import { and, eq, like } from 'drizzle-orm';
import { expect } from 'vitest';
import { type OidcIdp, startOidcIdp } from '../helpers/oidc-idp.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { registerRedirectUri } from './sign-in.ts';

type ConnectionType = (typeof CONNECTION_TYPES)[number];

/** An organization with a verified domain and an `inactive` connection of the given type. */
export async function organizationWithConnection(
  env: TestEnvironment,
  options: { connectionType: ConnectionType; name: string; domainPrefix: string },
) {
  const domain = uniqueDomain(options.domainPrefix);
  const organization = await env.caller.organizations.create({
    name: 'Acme',
    domain_data: [{ domain, state: 'verified' }],
  });
  const connection = await (await adminCaller()).connections.create({
    environment: env.environmentId,
    organization_id: organization.id,
    connection_type: options.connectionType,
    name: options.name,
    state: 'inactive',
  });
  return { domain, organization, connection };
}

/** A SAML connection configured from the dev IdP's metadata, and the app's redirect URI registered. */
export async function samlOrganization(env: TestEnvironment, idp: DevIdp, connectionType: ConnectionType = 'OktaSAML') {
  const made = await organizationWithConnection(env, { connectionType, name: 'Acme Okta', domainPrefix: 'saml' });
  await configureSamlConnection(await scopeOf(env.deps, env.environmentId), made.connection.id, {
    idp_metadata_url: idp.metadataUrl,
  });
  await registerRedirectUri(env);
  return made;
}

/**
 * An OIDC connection configured to a fresh loopback provider (pushed on `idps` for closing), its
 * redirect URI `redirectUri(connectionId)`, and the app's redirect URI registered.
 */
export async function oidcOrganization(
  env: TestEnvironment,
  idps: OidcIdp[],
  redirectUri: (connectionId: string) => string,
  options: { connectionType?: ConnectionType; name?: string; claims?: Record<string, unknown>; deps?: Deps } = {},
) {
  const made = await organizationWithConnection(env, {
    connectionType: options.connectionType ?? 'OktaOIDC',
    name: options.name ?? 'Acme Okta OIDC',
    domainPrefix: 'oidc',
  });
  const idp = await startOidcIdp({
    redirectUris: [redirectUri(made.connection.id)],
    claimsOf: (login) => ({
      email: `${login}@${made.domain}`,
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
      groups: ['engineering'],
      ...options.claims,
    }),
  });
  idps.push(idp);
  await configureOidcConnection(await scopeOf(options.deps ?? env.deps, env.environmentId), made.connection.id, {
    discovery_endpoint: idp.issuer,
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
  });
  await registerRedirectUri(env);
  return { ...made, idp };
}

/** The hidden inputs and the action of the first form of an HTML page. */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = (match[2] as string).replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  }
  return { action: action.replace(/&amp;/g, '&'), fields };
}

/** Goes through the dev IdP's login page as a person would, returning the ACS form the IdP answers. */
export async function signInAtIdp(location: string, email: string) {
  const page = await fetch(location);
  expect(page.status).toBe(200);
  const login = formOf(await page.text());
  const body = new URLSearchParams(login.fields);
  body.set('email', email);
  body.set('first_name', 'Ada');
  body.set('last_name', 'Lovelace');
  const answer = await fetch(new URL(login.action, location), { method: 'POST', body });
  expect(answer.status).toBe(200);
  return formOf(await answer.text());
}

/** The environment's stored `authentication.sso_*` events, oldest first. */
export function ssoEvents(env: TestEnvironment) {
  return env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'authentication.sso_%')))
    .orderBy(events.id);
}
