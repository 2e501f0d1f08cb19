import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { connections } from './tokens.ts';
import { users } from './users.ts';

/**
 * Single sign-on (issue #37). A connection's identity-provider configuration lives on its row
 * (`connections`, columns added by migration 0024); what a sign-in leaves behind lives here:
 * the authorization in flight, the one-use code, the profile and its access token, and the
 * SAML assertion ids remembered against replay.
 */

/** A sign-in attempt's state (the widget's `lastSession.state`, lower-cased). */
export const SSO_AUTHORIZATION_STATES = ['started', 'successful', 'failed', 'timed_out'] as const;
export type SsoAuthorizationState = (typeof SSO_AUTHORIZATION_STATES)[number];

// The JSON column types of connections (tokens.ts) live in sso-types.ts, below both files: sso.ts
// references `connections`, so tokens.ts may not import from here (no import ring).
export type { AttributeMapping, ConnectionDomain, SamlCertificate } from './sso-types.ts';

/**
 * An authorization in flight: made by `GET /sso/authorize`, consumed once by the identity
 * provider's answer (SAML ACS or OIDC callback). `id` travels as SAML RelayState / OIDC `state`;
 * the app's own `state` is kept to hand back with the code. Expires after the contract's 10 min.
 */
// @owner routers/src/sso
export const ssoAuthorizations = pgTable(
  'sso_authorizations',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    connectionId: idText('connection_id')
      .notNull()
      .references(() => connections.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    /** The app's `state`, returned verbatim with the code. */
    appState: text('app_state'),
    loginHint: text('login_hint'),
    /** SAML: the AuthnRequest ID the response's `InResponseTo` must carry. */
    samlRequestId: text('saml_request_id'),
    /** OIDC: the nonce the id_token must carry. */
    oidcNonce: text('oidc_nonce'),
    /** OIDC: the PKCE code verifier, sealed under the master key. */
    oidcCodeVerifierSealed: text('oidc_code_verifier_sealed'),
    /** The app's PKCE `code_challenge` (S256), which the code's exchange must answer with its verifier. */
    codeChallenge: text('code_challenge'),
    /** Where the sign-in started (the browser's address and User-Agent): the timed-out event's device. */
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    /** `started` until the IdP answers (`successful`/`failed`) or it expires (`timed_out`). */
    state: text('state').$type<SsoAuthorizationState>().notNull().default('started'),
    /** Why a sign-in failed (a short code such as `replayed_assertion`), never a secret. */
    failureReason: text('failure_reason'),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    index('sso_authorizations_environment_idx').on(t.environmentId, t.id),
    index('sso_authorizations_connection_idx').on(t.connectionId, t.id),
    index('sso_authorizations_expires_idx').on(t.expiresAt),
  ],
);

/**
 * A profile: who signed in through a connection, one row per (connection, IdP user id), updated
 * at each sign-in. `user_id` is the Atrium user the sign-in provisioned or matched (JIT).
 */
// @owner routers/src/sso
export const ssoProfiles = pgTable(
  'sso_profiles',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    connectionId: idText('connection_id')
      .notNull()
      .references(() => connections.id, { onDelete: 'cascade' }),
    organizationId: idText('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    userId: idText('user_id').references(() => users.id, { onDelete: 'set null' }),
    idpId: text('idp_id').notNull(),
    email: text('email').notNull(),
    firstName: text('first_name'),
    lastName: text('last_name'),
    name: text('name'),
    groups: jsonb('groups').$type<string[]>(),
    customAttributes: jsonb('custom_attributes').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    rawAttributes: jsonb('raw_attributes').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('sso_profiles_connection_idp_id_idx').on(t.connectionId, t.idpId),
    index('sso_profiles_environment_idx').on(t.environmentId, t.id),
    index('sso_profiles_user_idx').on(t.environmentId, t.userId),
  ],
);

/**
 * The one-use authorization code handed to the app's redirect URI, stored only as its SHA-256.
 * `POST /sso/token` spends it (sets `used_at`) within the contract's 10 minutes.
 */
// @owner routers/src/sso
export const ssoCodes = pgTable(
  'sso_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    environmentId: environmentIdColumn(),
    profileId: idText('profile_id')
      .notNull()
      .references(() => ssoProfiles.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    /** The authorization's PKCE `code_challenge` (S256): the exchange must send the verifier. */
    codeChallenge: text('code_challenge'),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [index('sso_codes_expires_idx').on(t.expiresAt)],
);

/** The access token `POST /sso/token` returns, for `GET /sso/profile`; stored as its SHA-256. */
// @owner routers/src/sso
export const ssoAccessTokens = pgTable(
  'sso_access_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    environmentId: environmentIdColumn(),
    profileId: idText('profile_id')
      .notNull()
      .references(() => ssoProfiles.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: timestamps.createdAt,
  },
  (t) => [index('sso_access_tokens_expires_idx').on(t.expiresAt)],
);

/**
 * SAML assertion ids already accepted, per connection, kept until the assertion's
 * `NotOnOrAfter` (plus the clock skew) has passed: a second POST of one assertion is a replay.
 */
// @owner routers/src/sso
export const samlAssertionIds = pgTable(
  'saml_assertion_ids',
  {
    environmentId: environmentIdColumn(),
    connectionId: idText('connection_id')
      .notNull()
      .references(() => connections.id, { onDelete: 'cascade' }),
    assertionId: text('assertion_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.connectionId, t.assertionId] }),
    index('saml_assertion_ids_expires_idx').on(t.expiresAt),
  ],
);

/**
 * An environment's registered redirect URIs (upstream `POST /user_management/redirect_uris`): an
 * authorization whose `redirect_uri` is not one of them is refused. One may be the default.
 */
// @owner routers/src/sso
export const redirectUris = pgTable(
  'redirect_uris',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    uri: text('uri').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    ...timestamps,
  },
  (t) => [uniqueIndex('redirect_uris_environment_uri_idx').on(t.environmentId, t.uri)],
);
