import { createHash } from 'node:crypto';
import { type Db, newId } from '@atrium/db';
import { authenticateApiKey } from '../auth/api-key.ts';
import { toConnection } from '../connections/service.ts';
import {
  type ConnectionRow,
  connectionsOfOrganization,
  connectionsOfType,
  connectionWithEnvironment,
  loadConnection,
  markConnectionSignIn,
} from '../connections/store.ts';
import { recordEvent, withEventsBatched } from '../events/record.ts';
import type { RequestDevice } from '../kernel/context.ts';
import type { Deps } from '../kernel/deps.ts';
import { ApiError, type FieldError, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { inBatches } from '../lib/batches.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { organizationOfVerifiedDomain, organizationVerifiedDomain } from '../organization-domains/store.ts';
import { addSignInMembership } from '../organization-memberships/service.ts';
import { membershipOf } from '../organization-memberships/store.ts';
import { loadOrganization } from '../organizations/store.ts';
import { seal, unseal } from '../signing/material.ts';
import { fullName, toUser } from '../user-wire.ts';
import { insertUser, markSignedIn, userByEmail, userById } from '../users/store.ts';
import { replayedAnswer, SsoFailure, type SsoIdentity } from './identity.ts';
import {
  consumeOidc,
  consumeSaml,
  isConfigured,
  protocolOf,
  rememberUse,
  samlMetadata,
  startProtocol,
} from './protocols.ts';
import type { BrowserOutcome, Profile } from './schemas.ts';
import {
  completeAuthorization,
  connectionAndAuthorization,
  deleteAccessTokensOfProfile,
  deleteExpiredSsoRows,
  environmentOfClientId,
  findAuthorization,
  findProfile,
  findRedirectUri,
  finishAuthorization,
  insertAuthorization,
  insertCode,
  lockExpiredAuthorizations,
  markTimedOut,
  type ProfileView,
  profileById,
  profileOfAccessTokenHash,
  redirectUrisOf,
  type SsoAuthorizationRow,
  setAuthorizationProtocolState,
  spendCodeForAccessToken,
  unspentCode,
  upsertProfile,
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
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
}

type SsoEventStatus = 'started' | 'succeeded' | 'failed' | 'timed_out';

/** No device known (a sign-in without a browser request, as in the service tests). */
const NO_DEVICE: RequestDevice = { ipAddress: null, userAgent: null };

/**
 * Upstream's `authentication.sso_*` payload: the type, the status, the browser's device
 * (`ip_address`, `user_agent` of the request that started, completed or failed the sign-in; of
 * the authorization's start when it timed out), who (user and e-mail when known), and the
 * connection; `error` on failure. No secret.
 */
export function ssoEventData(
  connection: Pick<ConnectionRow, 'id' | 'organizationId'>,
  status: SsoEventStatus,
  who: { userId?: string | null; email?: string | null } = {},
  error?: { code: string; message: string },
  device: RequestDevice = NO_DEVICE,
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    type: 'sso',
    status,
    ip_address: device.ipAddress,
    user_agent: device.userAgent,
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
function usableOf(rows: ConnectionRow[]): ConnectionRow | undefined {
  const usable = rows.filter((row) => protocolOf(row) !== undefined && isConfigured(row));
  return usable.find((row) => row.state === 'active') ?? usable[0];
}

const notConfigured = (what: string): ApiError => {
  const message = `${what} has no identity provider configured for single sign-on.`;
  return invalid([field('connection', 'connection_not_configured', message)], 'connection_not_configured', message);
};

/** The connection an authorization request names (by connection, organization, provider or domain). */
async function connectionOf(scope: Scope, input: BeginAuthorizationInput): Promise<ConnectionRow> {
  const named = [input.connection, input.organization, input.provider].filter((v) => v !== undefined && v !== '');
  if (named.length > 1) {
    const message = 'Send exactly one of connection, organization or provider.';
    throw invalid([field('connection', 'ambiguous_selector', message)]);
  }
  if (input.connection) {
    const connection = await loadConnection(scope.db, scope.env.id, input.connection);
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

/** The S256 challenge is the base64url SHA-256 of the verifier: 43 characters (RFC 7636 4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** A verifier is 43 to 128 unreserved characters (RFC 7636 4.1). */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * The authorization's PKCE challenge, or null without one. Upstream takes only `S256`, and its
 * method is required with a challenge (`plain` is refused: it would put the verifier in the URL).
 */
function codeChallengeOf(input: BeginAuthorizationInput): string | null {
  const challenge = input.code_challenge || undefined;
  const method = input.code_challenge_method || undefined;
  if (challenge === undefined && method === undefined) return null;
  if (method !== 'S256') {
    const message = "code_challenge_method must be 'S256' (the only PKCE method accepted).";
    throw invalid(
      [field('code_challenge_method', 'unsupported_code_challenge_method', message)],
      'invalid_request',
      message,
    );
  }
  if (challenge === undefined || !S256_CHALLENGE.test(challenge)) {
    const message = 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).';
    throw invalid([field('code_challenge', 'invalid_code_challenge', message)], 'invalid_request', message);
  }
  return challenge;
}

function unsupported(type: string): ApiError {
  const message = `Atrium cannot sign in through ${type}: only SAML and OpenID Connect connections (or an OAuth type configured as OpenID Connect) are brokered.`;
  return invalid([field('provider', 'unsupported_connection_type', message)], 'unsupported_connection_type', message);
}

/**
 * `GET /sso/authorize`: picks the connection, refuses an unregistered redirect_uri or a PKCE
 * challenge other than S256, writes the authorization (with the challenge and the browser's
 * device), builds the IdP redirect (`startSaml`/`startOidc`) and records
 * `authentication.sso_started`. Nothing is stored when anything is refused.
 */
export async function beginAuthorization(
  scope: Scope,
  input: BeginAuthorizationInput,
  device: RequestDevice = NO_DEVICE,
): Promise<{ url: string }> {
  if (input.response_type !== undefined && input.response_type !== 'code') {
    const message = "response_type must be 'code'.";
    throw invalid([field('response_type', 'unsupported_response_type', message)]);
  }
  const codeChallenge = codeChallengeOf(input);
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
      codeChallenge,
      ipAddress: device.ipAddress,
      userAgent: device.userAgent,
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
      ssoEventData(connection, 'started', { email: input.login_hint || null }, undefined, device),
    );
    return { url: started.url };
  });
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
  connection: ConnectionRow,
  authorizationId: string | null,
  identity: SsoIdentity,
  device: RequestDevice = NO_DEVICE,
): Promise<{ redirectUrl: string }> {
  const email = identity.email.trim();
  if (!email.includes('@') || !identity.idpId) {
    throw new SsoFailure('invalid_profile', 'The identity provider sent no usable e-mail address or user id.');
  }
  // Its events (user, membership, activation, success) are written in one statement at the end.
  return scope.db.transaction((tx) =>
    withEventsBatched(tx, async () => {
      const now = scope.now();
      // First, so that a second POST of the answer waits here for this one and is then refused;
      // a refusal below rolls this back and failSignIn remembers the use instead.
      if (identity.use && !(await rememberUse(tx, scope, connection.id, identity.use))) throw replayedAnswer();
      let redirectUri: string;
      let appState: string | null = null;
      let codeChallenge: string | null = null;
      if (authorizationId !== null) {
        // One UPDATE where it is this connection's, started and unexpired; only a refusal reads it to say why.
        const authorization =
          (await completeAuthorization(tx, scope.env.id, connection.id, authorizationId, now)) ??
          refusalOf(await findAuthorization(tx, scope.env.id, authorizationId, true), connection.id, now);
        redirectUri = authorization.redirectUri;
        appState = authorization.appState;
        codeChallenge = authorization.codeChallenge;
      } else {
        redirectUri = await idpInitiatedRedirect(tx, scope.env.id);
      }

      // The organization's domain policy: a verified domain vouches for the address; otherwise the
      // organization must allow profiles outside its domains. A connection with `domains` speaks
      // only for those: an address of another domain (even one the organization verified) is not
      // vouched for through this connection, and is let in only as a profile outside the domains.
      const organization = await loadOrganization(tx, scope.env.id, connection.organizationId, 'share');
      const emailDomain = domainOf(email);
      const ofConnection =
        connection.domains.length === 0 || connection.domains.some((d) => d.domain.toLowerCase() === emailDomain);
      const verified =
        ofConnection && (await organizationVerifiedDomain(tx, scope.env.id, organization.id, emailDomain));
      if (!verified && !organization.allowProfilesOutsideOrganization) {
        const where = ofConnection ? 'a verified domain of the organization' : "one of the connection's domains";
        throw new SsoFailure(
          'domain_not_allowed',
          `The domain of the signed-in address is not ${where}, and the organization allows no profiles outside its domains.`,
        );
      }

      const existing = await findProfile(tx, connection.id, identity.idpId);
      let user = existing?.userId ? await userById(tx, scope.env.id, existing.userId) : undefined;
      user ??= await userByEmail(tx, scope.env.id, email);
      // Created here: no membership yet, and nothing else sees it before commit.
      const fresh = !user;
      if (!user) {
        // Inserted signed in (its `last_sign_in_at` is this sign-in's, on `user.created` too).
        user = await insertUser(tx, {
          id: newId('user'),
          environmentId: scope.env.id,
          email,
          emailVerified: verified,
          firstName: identity.firstName ?? null,
          lastName: identity.lastName ?? null,
          metadata: {},
          lastSignInAt: now,
          createdAt: now,
          updatedAt: now,
        });
        await recordEvent(tx, scope, 'user.created', toUser(user));
      } else {
        await markSignedIn(tx, scope.env.id, user.id, now);
      }
      if (fresh || !(await membershipOf(tx, scope.env.id, organization.id, user.id))) {
        await addSignInMembership(tx, scope, { userId: user.id, fresh, organization });
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
        codeChallenge,
        expiresAt: new Date(now.getTime() + CODE_TTL_MS),
        createdAt: now,
      });

      // Last: the connection's row lock serialises concurrent sign-ins of the connection until commit.
      const activated = await markConnectionSignIn(tx, connection.id, now);
      if (activated) await recordEvent(tx, scope, 'connection.activated', toConnection(activated));
      await recordEvent(
        tx,
        scope,
        'authentication.sso_succeeded',
        ssoEventData(connection, 'succeeded', { userId: user.id, email }, undefined, device),
      );
      return { redirectUrl: withParams(redirectUri, { code, state: appState }) };
    }),
  );
}

/**
 * A refused IdP answer: marks the authorization failed with the reason (if it was still
 * started: only then is the app's redirect returned), records `authentication.sso_failed` (reason, no secret) and returns the app redirect
 * with `error`, `error_description` and the app's `state` when one is known.
 */
export async function failSignIn(
  scope: Scope,
  connection: ConnectionRow,
  authorizationId: string | null,
  failure: SsoFailure,
  device: RequestDevice = NO_DEVICE,
): Promise<{ redirectUrl?: string }> {
  // An answer after the 10 minutes ends the authorization as the retention sweep would: timed out.
  const timedOut = failure.reason === EXPIRED;
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    // A verified answer refused (by the domain policy, say) is spent all the same: it must not
    // pass later, after a change of policy. A replay is remembered already.
    if (failure.use && failure.reason !== REPLAYED) await rememberUse(tx, scope, connection.id, failure.use);
    let redirectUrl: string | undefined;
    if (authorizationId !== null) {
      const authorization = await findAuthorization(tx, scope.env.id, authorizationId, true);
      // Only an authorization still in flight fails (and sends the browser back to the app); one
      // completed or refused already stays as it is (a replayed response lands on the error page).
      const finished =
        authorization && authorization.connectionId === connection.id
          ? await finishAuthorization(tx, authorization.id, timedOut ? 'timed_out' : 'failed', failure.reason, now)
          : undefined;
      if (authorization && finished) {
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
      timedOut ? 'authentication.sso_timed_out' : 'authentication.sso_failed',
      timedOut
        ? ssoEventData(connection, 'timed_out', {}, undefined, device)
        : ssoEventData(connection, 'failed', {}, { code: failure.reason, message: failure.message }, device),
    );
    return redirectUrl === undefined ? {} : { redirectUrl };
  });
}

// The app's side: the code for a profile and token, the profile, sign-out -------------------

/** OAuth's refusals of `POST /sso/token`, in upstream's `{ error, error_description }` shape (the codec renders them so). */
export const OAUTH_ERRORS = ['invalid_client', 'invalid_grant', 'unsupported_grant_type', 'invalid_request'] as const;
const oauthError = (code: (typeof OAUTH_ERRORS)[number], message: string, status = 400) =>
  new ApiError(status, code, message);

/** The single place that turns a profile (its row, connection type and role slugs) into upstream's `Profile`. */
export function toProfile(view: ProfileView): Profile {
  const profile: Profile = {
    object: 'profile',
    id: view.id,
    idp_id: view.idp_id,
    organization_id: view.organization_id,
    connection_id: view.connection_id,
    connection_type: view.connection_type,
    email: view.email,
    first_name: view.first_name,
    last_name: view.last_name,
    name: view.name ?? fullName(view.first_name, view.last_name),
    raw_attributes: view.raw_attributes,
  };
  const roleSlugs = view.role_slugs;
  if (roleSlugs && roleSlugs.length > 0) {
    profile.role = { slug: roleSlugs[0] as string };
    profile.roles = roleSlugs.map((slug) => ({ slug }));
  }
  if (view.groups) profile.groups = view.groups;
  profile.custom_attributes = view.custom_attributes;
  return profile;
}

/**
 * `POST /sso/token` (the SDK's `getProfileAndToken`): the client secret is an API key of the
 * environment the client id names; the code is spent once, within its 10 minutes, in that
 * environment only. Answers the profile and a one-hour access token (stored as its SHA-256).
 *
 * PKCE (RFC 7636): a code whose authorization carried a `code_challenge` needs the matching
 * `code_verifier`, with or without the secret; a public client (no secret) is accepted only so,
 * for a code with a challenge. A missing or wrong verifier is `invalid_grant` and leaves the code
 * unspent (its one statement writes nothing): the verifier cannot be guessed, so a stolen code stays
 * useless, and the app holding the verifier can still finish its sign-in.
 */
export async function exchangeCode(
  deps: Deps,
  input: {
    client_id?: string | undefined;
    client_secret?: string | undefined;
    grant_type?: string | undefined;
    code?: string | undefined;
    code_verifier?: string | undefined;
  },
): Promise<{ token_type: 'Bearer'; access_token: string; expires_in: number; profile: Profile }> {
  if (input.grant_type !== 'authorization_code') {
    throw oauthError('unsupported_grant_type', "grant_type must be 'authorization_code'.");
  }
  const verifier = input.code_verifier;
  if (verifier !== undefined && !VERIFIER.test(verifier)) {
    // invalid_grant (RFC 7636 4.6), one of the refusals upstream's document lists for this route.
    throw oauthError('invalid_grant', 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, -, ., _ and ~.');
  }
  const isPublic = !input.client_secret && verifier !== undefined;
  if (!input.client_id || (!input.client_secret && !isPublic)) {
    throw oauthError(
      'invalid_client',
      'client_id and client_secret (an API key of the environment) are required, or a code_verifier (PKCE).',
    );
  }
  let env: { id: string; clientId: string };
  if (isPublic) {
    const found = await environmentOfClientId(deps.db, input.client_id);
    if (!found) throw oauthError('invalid_client', 'Invalid client ID or secret.');
    env = found;
  } else {
    try {
      env = await authenticateApiKey(deps, `Bearer ${input.client_secret}`);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        throw oauthError('invalid_client', 'Invalid client ID or secret.');
      }
      throw error;
    }
  }
  if (env.clientId !== input.client_id) throw oauthError('invalid_client', 'Invalid client ID or secret.');
  if (!input.code) throw oauthError('invalid_request', 'code is required.');
  const code = input.code;
  const now = deps.now();
  // One statement spends the code (and checks its PKCE challenge), stores the access token and
  // reads the profile; a refusal leaves the code unspent, and only then is the code read again to say why.
  const challenge = verifier === undefined ? null : createHash('sha256').update(verifier).digest('base64url');
  const accessToken = randomBase62(48);
  const view = await spendCodeForAccessToken(deps.db, {
    environmentId: env.id,
    codeHash: sha256Hex(code),
    codeChallenge: challenge,
    tokenHash: sha256Hex(accessToken),
    now,
    tokenExpiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_MS),
  });
  if (!view) throw await refusedExchange(deps.db, env.id, sha256Hex(code), now, verifier);
  return {
    token_type: 'Bearer' as const,
    access_token: accessToken,
    expires_in: ACCESS_TOKEN_TTL_MS / 1000,
    profile: toProfile(view),
  };
}

/** Why a code was not exchanged: spent or expired, or its PKCE challenge not met. */
async function refusedExchange(
  db: Db,
  environmentId: string,
  codeHash: string,
  now: Date,
  verifier: string | undefined,
) {
  const unspent = await unspentCode(db, environmentId, codeHash, now);
  if (!unspent) return oauthError('invalid_grant', 'The code has expired or has already been used.');
  if (unspent.codeChallenge === null) {
    return oauthError('invalid_grant', 'The authorization of this code sent no code_challenge.');
  }
  if (verifier === undefined)
    return oauthError('invalid_grant', 'code_verifier is required: the authorization used PKCE.');
  return oauthError('invalid_grant', 'The code_verifier does not match the code_challenge of the authorization.');
}

/** `GET /sso/profile` with `Authorization: Bearer <access_token>` (not an API key). */
export async function profileOfAccessToken(deps: Deps, accessToken: string | undefined): Promise<Profile> {
  const refused = () => new ApiError(401, 'unauthorized', 'Unauthorized: a valid SSO access token is required.');
  if (!accessToken) throw refused();
  const view = await profileOfAccessTokenHash(deps.db, sha256Hex(accessToken), deps.now());
  if (!view) throw refused();
  return toProfile(view);
}

/** How long a logout token may wait before `GET /sso/logout` (upstream: short-lived). */
export const LOGOUT_TOKEN_TTL_MS = 5 * 60 * 1000;
const LOGOUT_CONTEXT = 'sso-logout';

function baseUrlOf(deps: Deps): string {
  return deps.tokens.issuer.replace(/\/+$/, '');
}

/**
 * `POST /sso/logout/authorize`: a short-lived logout token for a profile of the caller's
 * environment (sealed under the master key: profile, environment and expiry), and the
 * `/sso/logout` URL that spends it.
 */
export async function authorizeLogout(scope: Scope, profileId: string) {
  const row = await profileById(scope.db, scope.env.id, profileId);
  if (!row) throw notFound('profile', profileId);
  const payload = { p: row.id, e: scope.env.id, x: scope.now().getTime() + LOGOUT_TOKEN_TTL_MS };
  const token = seal(scope.deps.tokens.masterKey, LOGOUT_CONTEXT, Buffer.from(JSON.stringify(payload)));
  const url = new URL(`${baseUrlOf(scope.deps)}/sso/logout`);
  url.searchParams.set('token', token);
  return { logout_url: url.toString(), logout_token: token };
}

/**
 * `GET /sso/logout?token=`: ends the profile's access tokens and sends the browser to the
 * environment's default redirect URI; an invalid or expired token is refused (the error page).
 */
export async function logout(deps: Deps, token: string | undefined): Promise<BrowserOutcome> {
  const refused: BrowserOutcome = {
    error: { reason: 'invalid_logout_token', message: 'The logout link is invalid or has expired.' },
  };
  if (!token) return refused;
  let payload: { p?: unknown; e?: unknown; x?: unknown };
  try {
    payload = JSON.parse(unseal(deps.tokens.masterKey, LOGOUT_CONTEXT, token, 'logout token').toString('utf8'));
  } catch {
    return refused;
  }
  if (typeof payload.p !== 'string' || typeof payload.e !== 'string' || typeof payload.x !== 'number') return refused;
  if (payload.x <= deps.now().getTime()) return refused;
  const profileId = payload.p;
  const environmentId = payload.e;
  const row = await profileById(deps.db, environmentId, profileId);
  if (row) await deps.db.transaction((tx) => deleteAccessTokensOfProfile(tx, row.id));
  const uris = await redirectUrisOf(deps.db, environmentId);
  const target = uris.find((u) => u.isDefault) ?? (uris.length === 1 ? uris[0] : undefined);
  if (!target) return { error: { reason: 'signed_out', message: 'You are signed out.' } };
  return { redirect: target.uri };
}

// The browser's side: the authorization request and the IdP's answers ----------------------

/** The Scope of an unauthenticated browser request, from the environment its `client_id` names. */
export async function scopeOfClientId(deps: Deps, clientId: string | undefined): Promise<Scope> {
  const env = clientId ? await environmentOfClientId(deps.db, clientId) : undefined;
  if (!env) {
    const message = clientId ? `client_id '${clientId}' names no environment.` : 'client_id is required.';
    throw invalid([field('client_id', 'invalid_client_id', message)], 'invalid_client_id', message);
  }
  return { db: deps.db, env, now: deps.now, deps };
}

/** The Scope of a connection named by its id in a public URL (ACS, callback, metadata). */
async function connectionScope(deps: Deps, connectionId: string): Promise<{ scope: Scope; connection: ConnectionRow }> {
  const found = await connectionWithEnvironment(deps.db, connectionId);
  if (!found) throw notFound('connection', connectionId);
  const scope: Scope = { db: deps.db, env: found.env, now: deps.now, deps };
  return { scope, connection: found.connection };
}

/**
 * `connectionScope` and the authorization the IdP's answer names (RelayState, `state`), read
 * together; the authorization is undefined when it is none of this connection's.
 */
async function answerScope(
  deps: Deps,
  connectionId: string,
  authorizationId: string | null | undefined,
): Promise<{ scope: Scope; connection: ConnectionRow; authorization: SsoAuthorizationRow | undefined }> {
  const found = await connectionAndAuthorization(deps.db, connectionId, authorizationId || null);
  if (!found) throw notFound('connection', connectionId);
  const scope: Scope = { db: deps.db, env: found.env, now: deps.now, deps };
  return { scope, connection: found.connection, authorization: found.authorization };
}

function failureOf(error: unknown): SsoFailure {
  if (error instanceof SsoFailure) return error;
  if (error instanceof ApiError && error.status < 500) return new SsoFailure(error.apiCode, error.message);
  throw error;
}

/** Completes or fails a sign-in; the browser's next step either way. */
async function settle(
  scope: Scope,
  connection: ConnectionRow,
  authorizationId: string | null,
  device: RequestDevice,
  verify: () => Promise<SsoIdentity>,
): Promise<BrowserOutcome> {
  let failure: SsoFailure;
  let identity: SsoIdentity | undefined;
  try {
    identity = await verify();
    const { redirectUrl } = await completeSignIn(scope, connection, authorizationId, identity, device);
    return { redirect: redirectUrl };
  } catch (error) {
    failure = failureOf(error);
  }
  // The sign-in's transaction rolled back with the answer's use: its refusal remembers it.
  failure.use ??= identity?.use;
  const { redirectUrl } = await failSignIn(scope, connection, authorizationId, failure, device);
  if (redirectUrl) return { redirect: redirectUrl };
  return { error: { reason: failure.reason, message: failure.message } };
}

/** Why an authorization could not complete the sign-in (`completeAuthorization` found none to finish). */
function refusalOf(authorization: SsoAuthorizationRow | undefined, connectionId: string, now: Date): never {
  if (!authorization || authorization.connectionId !== connectionId) {
    throw new SsoFailure('unknown_authorization', 'The sign-in does not match an authorization of this connection.');
  }
  if (isExpired(authorization, now)) throw expiredFailure();
  throw new SsoFailure('authorization_already_used', 'This sign-in was already completed or refused.');
}

const EXPIRED = 'authorization_expired';
const REPLAYED = replayedAnswer().reason;
const expiredFailure = () => new SsoFailure(EXPIRED, 'The sign-in took longer than 10 minutes.');
const isExpired = (authorization: { state: string; expiresAt: Date }, now: Date) =>
  authorization.state === 'timed_out' || authorization.expiresAt.getTime() <= now.getTime();

/**
 * The IdP's answer to an authorization past its 10 minutes is not verified at all (an OIDC code is
 * not exchanged): the authorization times out instead.
 */
function verifyUnlessExpired(
  scope: Scope,
  authorization: { state: string; expiresAt: Date } | undefined,
  verify: () => Promise<SsoIdentity>,
): () => Promise<SsoIdentity> {
  return () => (authorization && isExpired(authorization, scope.now()) ? Promise.reject(expiredFailure()) : verify());
}

/**
 * `POST /sso/saml/acs/:connection_id`: the IdP's response. `RelayState` names the authorization
 * (looked up within the connection's environment); without one it is IdP-initiated, which the
 * SAML module refuses unless the connection allows it.
 */
export async function receiveSamlResponse(
  deps: Deps,
  input: { connection_id: string; SAMLResponse: string; RelayState?: string | undefined },
  device: RequestDevice = NO_DEVICE,
): Promise<BrowserOutcome> {
  const { scope, connection, authorization } = await answerScope(deps, input.connection_id, input.RelayState);
  const form: { SAMLResponse: string; RelayState?: string } = { SAMLResponse: input.SAMLResponse };
  if (input.RelayState !== undefined) form.RelayState = input.RelayState;
  const expected = authorization?.samlRequestId ? { samlRequestId: authorization.samlRequestId } : null;
  return settle(
    scope,
    connection,
    authorization?.id ?? null,
    device,
    verifyUnlessExpired(scope, authorization, () => consumeSaml(scope, connection, form, expected)),
  );
}

/** `GET /sso/oidc/callback/:connection_id`: the OpenID provider's answer (`state` = authorization id). */
export async function receiveOidcCallback(
  deps: Deps,
  input: { connection_id: string; url: string },
  device: RequestDevice = NO_DEVICE,
): Promise<BrowserOutcome> {
  const url = new URL(input.url);
  const state = url.searchParams.get('state');
  const { scope, connection, authorization } = await answerScope(deps, input.connection_id, state);
  if (!authorization) {
    return settle(scope, connection, null, device, () =>
      Promise.reject(new SsoFailure('state_mismatch', 'The callback names no sign-in of this connection.')),
    );
  }
  const idpError = url.searchParams.get('error');
  if (idpError) {
    const message = url.searchParams.get('error_description') ?? 'The OpenID provider refused the sign-in.';
    return settle(scope, connection, authorization.id, device, () =>
      Promise.reject(new SsoFailure(`idp_${idpError}`.slice(0, 64), message.slice(0, 300))),
    );
  }
  const expected = {
    authorizationId: authorization.id,
    oidcNonce: authorization.oidcNonce ?? '',
    oidcCodeVerifierSealed: authorization.oidcCodeVerifierSealed ?? '',
  };
  return settle(
    scope,
    connection,
    authorization.id,
    device,
    verifyUnlessExpired(scope, authorization, () => consumeOidc(scope, connection, url, expected)),
  );
}

/** `GET /sso/saml/metadata/:connection_id`: the SP metadata document of a SAML connection. */
export async function spMetadataOf(deps: Deps, connectionId: string): Promise<string> {
  const { connection } = await connectionScope(deps, connectionId);
  if (protocolOf(connection) !== 'saml') throw notFound('connection', connectionId);
  return samlMetadata(deps, connection);
}

// Expiry (the retention worker) ----------------------------------------------------------------

/** How long a finished authorization is kept past its expiry (the widget shows the last sign-in). */
export const FINISHED_AUTHORIZATION_GRACE_MS = 24 * 60 * 60_000;

/**
 * Marks `started` authorizations past their 10 minutes `timed_out`, each with
 * `authentication.sso_timed_out` in its environment, in batches; how many.
 */
export function timeOutAuthorizations(deps: Deps, batchSize = 500): Promise<number> {
  return inBatches(batchSize, (size) => {
    const now = deps.now();
    return deps.db.transaction(async (tx) => {
      const rows = await lockExpiredAuthorizations(tx, now, size);
      await markTimedOut(
        tx,
        rows.map((row) => row.id),
      );
      for (const row of rows) {
        const scope: Scope = { db: tx, env: row.env, now: deps.now, deps };
        const data = ssoEventData(
          { id: row.connectionId, organizationId: row.organizationId },
          'timed_out',
          { email: row.loginHint },
          undefined,
          { ipAddress: row.ipAddress, userAgent: row.userAgent },
        );
        await recordEvent(tx, scope, 'authentication.sso_timed_out', data);
      }
      return rows.length;
    });
  });
}

/**
 * The SSO part of the retention sweep: times out expired authorizations, then deletes expired
 * codes, access tokens and SAML assertion ids, and finished authorizations a day past expiry.
 */
export async function sweepSso(deps: Deps): Promise<Record<string, number>> {
  const timedOut = await timeOutAuthorizations(deps);
  const now = deps.now();
  const deleted = await deleteExpiredSsoRows(deps.db, now, new Date(now.getTime() - FINISHED_AUTHORIZATION_GRACE_MS));
  return {
    sso_authorizations_timed_out: timedOut,
    sso_codes: deleted.codes,
    sso_access_tokens: deleted.accessTokens,
    saml_assertion_ids: deleted.assertionIds,
    sso_authorizations: deleted.authorizations,
  };
}
