import { type Db, newId } from '@atrium/db';
import { toConnection } from '../connections/service.ts';
import { recordEvent } from '../events/record.ts';
import { type ApiError, type FieldError, invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { addMembership } from '../organization-memberships/service.ts';
import { loadOrganization } from '../organizations/store.ts';
import { toUser } from '../user-wire.ts';
import { insertUser } from '../users/store.ts';
import { SsoFailure, type SsoIdentity } from './identity.ts';
import { isConfigured, protocolOf, startProtocol } from './protocols.ts';
import {
  connectionsOfOrganization,
  connectionsOfType,
  findAuthorization,
  findProfile,
  findRedirectUri,
  finishAuthorization,
  insertAuthorization,
  insertCode,
  loadSsoConnection,
  markConnectionSignIn,
  membershipOf,
  organizationOfVerifiedDomain,
  organizationVerifiedDomain,
  redirectUrisOf,
  type SsoAuthorizationRow,
  type SsoConnectionRow,
  setAuthorizationProtocolState,
  upsertProfile,
  userByEmail,
  userById,
} from './store.ts';

// The SSO service: an authorization from the app's request to the IdP's answer, the decision on
// a verified identity (Just-in-time provisioning under the organization's domain policy), and
// the one-use code the app exchanges for the profile. Protocol modules verify; this decides.

/** How long an authorization waits for the IdP, and a code for the app (the contract's 10 min). */
export const AUTHORIZATION_TTL_MS = 10 * 60 * 1000;
export const CODE_TTL_MS = 10 * 60 * 1000;
/** The access token of `GET /sso/profile`: one hour. */
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;

/** The `provider` values of upstream's authorization URL (OAuth providers). */
export const OAUTH_PROVIDERS = ['GoogleOAuth', 'MicrosoftOAuth', 'GitHubOAuth', 'AppleOAuth'] as const;

export interface BeginAuthorizationInput {
  response_type?: string | undefined;
  redirect_uri?: string | undefined;
  connection?: string | undefined;
  organization?: string | undefined;
  provider?: string | undefined;
  state?: string | undefined;
  login_hint?: string | undefined;
  domain_hint?: string | undefined;
}

type SsoEventStatus = 'started' | 'succeeded' | 'failed' | 'timed_out';

/**
 * Upstream's `authentication.sso_*` payload: the type, the status, who (user and e-mail when
 * known), and the connection; `error` on failure. No request metadata is kept (null), no secret.
 */
export function ssoEventData(
  connection: Pick<SsoConnectionRow, 'id' | 'organizationId'>,
  status: SsoEventStatus,
  who: { userId?: string | null; email?: string | null } = {},
  error?: { code: string; message: string },
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    type: 'sso',
    status,
    ip_address: null,
    user_agent: null,
    user_id: who.userId ?? null,
    email: who.email ?? null,
    sso: { organization_id: connection.organizationId, connection_id: connection.id, session_id: null },
  };
  if (error) data.error = error;
  return data;
}

const field = (name: string, code: string, message: string): FieldError => ({ field: name, code, message });

/** The registered redirect URI the request names, or the environment's single default. */
async function redirectUriOf(scope: Scope, given: string | undefined): Promise<string> {
  if (given !== undefined && given !== '') {
    const row = await findRedirectUri(scope.db, scope.env.id, given);
    if (row) return row.uri;
    const message = `redirect_uri '${given}' is not registered for this environment (npx atrium redirect-uris add).`;
    throw invalid([field('redirect_uri', 'redirect_uri_not_registered', message)], 'invalid_redirect_uri', message);
  }
  const defaults = (await redirectUrisOf(scope.db, scope.env.id)).filter((row) => row.isDefault);
  if (defaults.length === 1 && defaults[0]) return defaults[0].uri;
  const message = 'redirect_uri is required: the environment has no default redirect URI.';
  throw invalid([field('redirect_uri', 'required', message)], 'invalid_redirect_uri', message);
}

/** The first connection of the organization that can sign in (an active one first). */
function usableOf(rows: SsoConnectionRow[]): SsoConnectionRow | undefined {
  const usable = rows.filter((row) => protocolOf(row) !== undefined && isConfigured(row));
  return usable.find((row) => row.state === 'active') ?? usable[0];
}

const notConfigured = (what: string): ApiError => {
  const message = `${what} has no identity provider configured for single sign-on.`;
  return invalid([field('connection', 'connection_not_configured', message)], 'connection_not_configured', message);
};

/** The connection an authorization request names (by connection, organization, provider or domain). */
async function connectionOf(scope: Scope, input: BeginAuthorizationInput): Promise<SsoConnectionRow> {
  const named = [input.connection, input.organization, input.provider].filter((v) => v !== undefined && v !== '');
  if (named.length > 1) {
    const message = 'Send exactly one of connection, organization or provider.';
    throw invalid([field('connection', 'ambiguous_selector', message)]);
  }
  if (input.connection) {
    const connection = await loadSsoConnection(scope.db, scope.env.id, input.connection);
    if (protocolOf(connection) === undefined) throw unsupported(connection.connectionType);
    if (!isConfigured(connection)) throw notConfigured(`Connection '${connection.id}'`);
    return connection;
  }
  if (input.provider) {
    if (!(OAUTH_PROVIDERS as readonly string[]).includes(input.provider)) {
      const message = `provider must be one of ${OAUTH_PROVIDERS.join(', ')}.`;
      throw invalid([field('provider', 'unsupported_provider', message)], 'unsupported_provider', message);
    }
    const connection = usableOf(await connectionsOfType(scope.db, scope.env.id, input.provider));
    if (!connection) throw unsupported(input.provider);
    return connection;
  }
  let organizationId = input.organization;
  if (!organizationId && input.domain_hint) {
    organizationId = await organizationOfVerifiedDomain(scope.db, scope.env.id, input.domain_hint.toLowerCase());
    if (!organizationId) {
      const message = `No organization verified the domain '${input.domain_hint}'.`;
      throw invalid([field('domain_hint', 'domain_not_found', message)]);
    }
  }
  if (!organizationId) {
    const message = 'Send exactly one of connection, organization or provider.';
    throw invalid([field('connection', 'required', message)]);
  }
  await loadOrganization(scope.db, scope.env.id, organizationId);
  const connection = usableOf(await connectionsOfOrganization(scope.db, scope.env.id, organizationId));
  if (!connection) throw notConfigured(`Organization '${organizationId}'`);
  return connection;
}

function unsupported(type: string): ApiError {
  const message = `Atrium cannot sign in through ${type}: only SAML and OpenID Connect connections (or an OAuth type configured as OpenID Connect) are brokered.`;
  return invalid([field('provider', 'unsupported_connection_type', message)], 'unsupported_connection_type', message);
}

/**
 * `GET /sso/authorize`: picks the connection, refuses an unregistered redirect_uri, writes the
 * authorization, builds the IdP redirect (`startSaml`/`startOidc`) and records
 * `authentication.sso_started`. Nothing is stored when anything is refused.
 */
export async function beginAuthorization(scope: Scope, input: BeginAuthorizationInput): Promise<{ url: string }> {
  if (input.response_type !== undefined && input.response_type !== 'code') {
    const message = "response_type must be 'code'.";
    throw invalid([field('response_type', 'unsupported_response_type', message)]);
  }
  const redirectUri = await redirectUriOf(scope, input.redirect_uri);
  const connection = await connectionOf(scope, input);
  return scope.db.transaction(async (tx) => {
    const txScope: Scope = { ...scope, db: tx };
    const now = scope.now();
    const authorization = await insertAuthorization(tx, {
      id: newId('ssoAuthorization'),
      environmentId: scope.env.id,
      connectionId: connection.id,
      redirectUri,
      appState: input.state ?? null,
      loginHint: input.login_hint ?? null,
      expiresAt: new Date(now.getTime() + AUTHORIZATION_TTL_MS),
      createdAt: now,
    });
    const started = await startProtocol(txScope, connection, authorization.id, input.login_hint || undefined);
    const kept: { samlRequestId?: string; oidcNonce?: string; oidcCodeVerifierSealed?: string } = {};
    if (started.samlRequestId !== undefined) kept.samlRequestId = started.samlRequestId;
    if (started.oidcNonce !== undefined) kept.oidcNonce = started.oidcNonce;
    if (started.oidcCodeVerifierSealed !== undefined) kept.oidcCodeVerifierSealed = started.oidcCodeVerifierSealed;
    if (Object.keys(kept).length > 0) await setAuthorizationProtocolState(tx, authorization.id, kept);
    await recordEvent(
      tx,
      scope,
      'authentication.sso_started',
      ssoEventData(connection, 'started', { email: input.login_hint || null }),
    );
    return { url: started.url };
  });
}

/** The authorization an IdP answer names, if it is one of this connection's (else undefined). */
export async function authorizationOf(
  scope: Scope,
  connection: SsoConnectionRow,
  authorizationId: string,
): Promise<SsoAuthorizationRow | undefined> {
  const row = await findAuthorization(scope.db, scope.env.id, authorizationId);
  return row && row.connectionId === connection.id ? row : undefined;
}

/** Where an IdP-initiated sign-in lands: the environment's default redirect URI (or its only one). */
async function idpInitiatedRedirect(db: Db, environmentId: string): Promise<string> {
  const rows = await redirectUrisOf(db, environmentId);
  const chosen = rows.find((row) => row.isDefault) ?? (rows.length === 1 ? rows[0] : undefined);
  if (!chosen) throw new SsoFailure('no_default_redirect_uri', 'The environment has no default redirect URI.');
  return chosen.uri;
}

/** The domain part of an e-mail address, lower-cased. */
const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

function withParams(uri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value != null) url.searchParams.set(key, value);
  return url.toString();
}

/**
 * A verified identity signs in: marks the authorization successful (once), provisions the user
 * and an active membership under the organization's domain policy (Just-in-time), upserts the
 * profile, issues the one-use code, activates the connection on its first success and records
 * `authentication.sso_succeeded`. Throws SsoFailure when the policy or the authorization refuses.
 */
export async function completeSignIn(
  scope: Scope,
  connection: SsoConnectionRow,
  authorizationId: string | null,
  identity: SsoIdentity,
): Promise<{ redirectUrl: string }> {
  const email = identity.email.trim();
  if (!email.includes('@') || !identity.idpId) {
    throw new SsoFailure('invalid_profile', 'The identity provider sent no usable e-mail address or user id.');
  }
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    let redirectUri: string;
    let appState: string | null = null;
    if (authorizationId !== null) {
      const authorization = await findAuthorization(tx, scope.env.id, authorizationId, true);
      if (!authorization || authorization.connectionId !== connection.id) {
        throw new SsoFailure(
          'unknown_authorization',
          'The sign-in does not match an authorization of this connection.',
        );
      }
      if (authorization.state !== 'started') {
        throw new SsoFailure('authorization_already_used', 'This sign-in was already completed or refused.');
      }
      if (authorization.expiresAt.getTime() <= now.getTime()) {
        throw new SsoFailure('authorization_expired', 'The sign-in took longer than 10 minutes.');
      }
      await finishAuthorization(tx, authorization.id, 'successful', null, now);
      redirectUri = authorization.redirectUri;
      appState = authorization.appState;
    } else {
      redirectUri = await idpInitiatedRedirect(tx, scope.env.id);
    }

    // The organization's domain policy: a verified domain vouches for the address; otherwise the
    // organization must allow profiles outside its domains.
    const organization = await loadOrganization(tx, scope.env.id, connection.organizationId, 'share');
    const verified = await organizationVerifiedDomain(tx, scope.env.id, organization.id, domainOf(email));
    if (!verified && !organization.allowProfilesOutsideOrganization) {
      throw new SsoFailure(
        'domain_not_allowed',
        `The domain of the signed-in address is not a verified domain of the organization, which allows no profiles outside its domains.`,
      );
    }

    const existing = await findProfile(tx, connection.id, identity.idpId);
    let user = existing?.userId ? await userById(tx, scope.env.id, existing.userId) : undefined;
    user ??= await userByEmail(tx, scope.env.id, email);
    if (!user) {
      user = await insertUser(tx, {
        id: newId('user'),
        environmentId: scope.env.id,
        email,
        emailVerified: verified,
        firstName: identity.firstName ?? null,
        lastName: identity.lastName ?? null,
        metadata: {},
        createdAt: now,
        updatedAt: now,
      });
      await recordEvent(tx, scope, 'user.created', toUser(user));
    }
    if (!(await membershipOf(tx, scope.env.id, user.id, organization.id))) {
      await addMembership(tx, scope, { userId: user.id, organizationId: organization.id });
    }

    const profile = await upsertProfile(tx, {
      id: existing?.id ?? newId('ssoProfile'),
      environmentId: scope.env.id,
      connectionId: connection.id,
      organizationId: organization.id,
      userId: user.id,
      idpId: identity.idpId,
      email,
      firstName: identity.firstName ?? null,
      lastName: identity.lastName ?? null,
      name: identity.name ?? null,
      groups: identity.groups ?? null,
      customAttributes: identity.customAttributes,
      rawAttributes: identity.rawAttributes,
      createdAt: now,
      updatedAt: now,
    });

    const code = randomBase62(43);
    await insertCode(tx, {
      codeHash: sha256Hex(code),
      environmentId: scope.env.id,
      profileId: profile.id,
      redirectUri,
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      createdAt: now,
    });

    const wasActive = (await loadSsoConnection(tx, scope.env.id, connection.id, 'update')).state === 'active';
    const after = await markConnectionSignIn(tx, connection.id, now);
    if (!wasActive) {
      await recordEvent(tx, scope, 'connection.activated', toConnection(after));
    }
    await recordEvent(
      tx,
      scope,
      'authentication.sso_succeeded',
      ssoEventData(connection, 'succeeded', { userId: user.id, email }),
    );
    return { redirectUrl: withParams(redirectUri, { code, state: appState }) };
  });
}

/**
 * A refused IdP answer: marks the authorization failed with the reason (if it was still
 * started), records `authentication.sso_failed` (reason, no secret) and returns the app redirect
 * with `error`, `error_description` and the app's `state` when one is known.
 */
export async function failSignIn(
  scope: Scope,
  connection: SsoConnectionRow,
  authorizationId: string | null,
  failure: SsoFailure,
): Promise<{ redirectUrl?: string }> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    let redirectUrl: string | undefined;
    if (authorizationId !== null) {
      const authorization = await findAuthorization(tx, scope.env.id, authorizationId, true);
      if (authorization && authorization.connectionId === connection.id) {
        await finishAuthorization(tx, authorization.id, 'failed', failure.reason, now);
        redirectUrl = withParams(authorization.redirectUri, {
          error: failure.reason,
          error_description: failure.message,
          state: authorization.appState,
        });
      }
    }
    await recordEvent(
      tx,
      scope,
      'authentication.sso_failed',
      ssoEventData(connection, 'failed', {}, { code: failure.reason, message: failure.message }),
    );
    return redirectUrl === undefined ? {} : { redirectUrl };
  });
}
