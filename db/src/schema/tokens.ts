import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import type { AttributeMapping, ConnectionDomain, SamlCertificate } from './sso-types.ts';
import { users } from './users.ts';

/** The public half of an RSA signing key, as published in the JWKS. */
export interface PublicRsaJwk {
  kty: 'RSA';
  n: string;
  e: string;
}

/**
 * An environment's RSA-2048 signing keys. A key is published from `created_at` until
 * `retires_at` (null: no successor yet) and signs from `active_from` while it is the newest
 * active key. The private key is AES-256-GCM encrypted under the master key.
 */
// @owner routers/src/signing
export const signingKeys = pgTable(
  'signing_keys',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    publicJwk: jsonb('public_jwk').$type<PublicRsaJwk>().notNull(),
    /** Base64 (not url) DER of the self-signed X.509 certificate, as in `x5c`. */
    certificate: text('certificate').notNull(),
    /** base64url(SHA-256(DER certificate)). */
    thumbprint: text('thumbprint').notNull(),
    /** `v1.<iv>.<tag>.<ciphertext>` (base64url) of the PKCS#8 DER private key. */
    privateKeyEncrypted: text('private_key_encrypted').notNull(),
    activeFrom: ts('active_from').notNull(),
    retiresAt: ts('retires_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [index('signing_keys_environment_idx').on(t.environmentId, t.id)],
);

/** A session a client token is bound to (`sid`), so that the token can be revoked. */
// @owner routers/src/sessions
export const sessions = pgTable(
  'sessions',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    userId: idText('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    /** The device that first used the session's tokens on a client surface (socket address, User-Agent). */
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    /** The last client-surface use, kept to the minute (sessions/service.ts SESSION_ACTIVITY_STEP_MS). */
    lastActivityAt: ts('last_activity_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    index('sessions_environment_idx').on(t.environmentId, t.id),
    index('sessions_user_idx').on(t.environmentId, t.userId, t.id),
    // The retention sweep deletes sessions long past their expiry, oldest first.
    index('sessions_expires_idx').on(t.expiresAt),
  ],
);

export const SESSION_CHALLENGE_PURPOSES = ['identity', 'email_change', 'elevated_access', 'password_failure'] as const;
export type SessionChallengePurpose = (typeof SESSION_CHALLENGE_PURPOSES)[number];

/**
 * What a user proves within one session, or with a widget token (which is no session) outside
 * any (the UserProfile widget's "Edit email"): a code mailed to the current address (`identity`)
 * or to a new one (`email_change`), and the elevated access a right code grants for a few
 * minutes (`elevated_access`). (`password_failure` is no longer written: wrong passwords are
 * counted in shared rate windows.) Only SHA-256s of codes and tokens are kept; a code dies after
 * a few wrong tries. Everything dies with its session, or its user.
 */
// @owner routers/src/session-challenges
export const sessionChallenges = pgTable(
  'session_challenges',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    userId: idText('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The operation-20 session it was proven in; null for a widget token's (held by the user alone). */
    sessionId: idText('session_id').references(() => sessions.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<SessionChallengePurpose>().notNull(),
    /** Where the code went: the current address, or the address to change to. Null for elevated access. */
    email: text('email'),
    secretHash: text('secret_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    index('session_challenges_session_idx').on(t.sessionId, t.purpose, t.id),
    index('session_challenges_user_idx').on(t.userId, t.purpose, t.id),
  ],
);

export const AGENT_REGISTRATION_STATUSES = ['unverified', 'verified', 'expired', 'revoked'] as const;
export type AgentRegistrationStatus = (typeof AGENT_REGISTRATION_STATUSES)[number];
export const AGENT_REGISTRATION_KINDS = ['service_auth'] as const;
export type AgentRegistrationKind = (typeof AGENT_REGISTRATION_KINDS)[number];

/** An agent identity: who the agent acts for in the caller's application. */
// @owner routers/src/agents
export const agentIdentities = pgTable(
  'agent_identities',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    userlandUserId: text('userland_user_id'),
    ...timestamps,
  },
  (t) => [index('agent_identities_environment_idx').on(t.environmentId, t.id)],
);

/**
 * An agent registration of an organization, with its claim and the claim's completion held in
 * the same row (they exist once per registration and are never listed on their own).
 */
// @owner routers/src/agents
export const agentRegistrations = pgTable(
  'agent_registrations',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    agentIdentityId: idText('agent_identity_id')
      .notNull()
      .references(() => agentIdentities.id, { onDelete: 'cascade' }),
    status: text('status').$type<AgentRegistrationStatus>().notNull(),
    kind: text('kind').$type<AgentRegistrationKind>().notNull().default('service_auth'),
    claimId: idText('claim_id').notNull(),
    claimCreatedAt: ts('claim_created_at').notNull(),
    claimExpiresAt: ts('claim_expires_at').notNull(),
    claimCompletionId: idText('claim_completion_id'),
    claimCompletionCreatedAt: ts('claim_completion_created_at'),
    claimCompletionExpiresAt: ts('claim_completion_expires_at'),
    claimedAt: ts('claimed_at'),
    ...timestamps,
  },
  (t) => [
    index('agent_registrations_environment_idx').on(t.environmentId, t.id),
    index('agent_registrations_organization_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);

/** Agent API keys, stored only as SHA-256 hashes like API keys. */
// @owner routers/src/agents
export const agentApiKeys = pgTable(
  'agent_api_keys',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    registrationId: idText('registration_id')
      .notNull()
      .references(() => agentRegistrations.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    uniqueIndex('agent_api_keys_key_hash_unique').on(t.keyHash),
    index('agent_api_keys_registration_idx').on(t.environmentId, t.registrationId, t.id),
  ],
);

/** Issued agent access tokens by `jti`, so a token can be revoked before it expires. */
// @owner routers/src/agents
export const agentAccessTokens = pgTable(
  'agent_access_tokens',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    registrationId: idText('registration_id')
      .notNull()
      .references(() => agentRegistrations.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [index('agent_access_tokens_registration_idx').on(t.environmentId, t.registrationId, t.id)],
);

/** Upstream's connection types (the WorkOS Node SDK's `ConnectionType`). */
export const CONNECTION_TYPES = [
  'ADFSSAML',
  'AdpOidc',
  'AppleOAuth',
  'AzureSAML',
  'CasSAML',
  'CleverOIDC',
  'ClassLinkSAML',
  'CloudflareSAML',
  'CyberArkSAML',
  'DuoSAML',
  'EntraIdOIDC',
  'GenericOIDC',
  'GenericSAML',
  'GitHubOAuth',
  'GoogleOAuth',
  'GoogleSAML',
  'JumpCloudSAML',
  'KeycloakSAML',
  'LastPassSAML',
  'LoginGovOidc',
  'MagicLink',
  'MicrosoftOAuth',
  'MiniOrangeSAML',
  'NetIqSAML',
  'OktaOIDC',
  'OktaSAML',
  'OneLoginSAML',
  'OracleSAML',
  'PingFederateSAML',
  'PingOneSAML',
  'RipplingSAML',
  'SalesforceOAuth',
  'SalesforceSAML',
  'ShibbolethGenericSAML',
  'ShibbolethSAML',
  'SimpleSamlPhpSAML',
  'VMwareSAML',
] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];
export const CONNECTION_STATES = ['active', 'inactive'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

// @owner routers/src/connections
export const connections = pgTable(
  'connections',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    connectionType: text('connection_type').$type<ConnectionType>().notNull(),
    name: text('name').notNull(),
    state: text('state').$type<ConnectionState>().notNull(),
    /** Upstream's connection domains (`connection_domain` objects). */
    domains: jsonb('domains').$type<ConnectionDomain[]>().notNull().default(sql`'[]'::jsonb`),
    /** How IdP attributes or claims become profile fields; defaults per protocol when absent. */
    attributeMapping: jsonb('attribute_mapping').$type<AttributeMapping>().notNull().default(sql`'{}'::jsonb`),
    /** SAML: the IdP as its metadata describes it (entity id, SSO URL, signing certificates). */
    samlIdpEntityId: text('saml_idp_entity_id'),
    samlIdpSsoUrl: text('saml_idp_sso_url'),
    samlIdpMetadataUrl: text('saml_idp_metadata_url'),
    samlIdpCertificates: jsonb('saml_idp_certificates').$type<SamlCertificate[]>().notNull().default(sql`'[]'::jsonb`),
    /** SAML: whether AuthnRequests are signed with the connection's SP key. */
    samlSignRequests: boolean('saml_sign_requests').notNull().default(false),
    /** SAML: the SP signing key (sealed under the master key) and its self-signed certificate. */
    samlSpPrivateKeySealed: text('saml_sp_private_key_sealed'),
    samlSpCertificate: text('saml_sp_certificate'),
    /** SAML: IdP-initiated sign-in (an unsolicited response) is refused unless allowed here. */
    samlIdpInitiatedEnabled: boolean('saml_idp_initiated_enabled').notNull().default(false),
    /** OIDC: the issuer, its discovery document as last fetched, and the client registration. */
    oidcIssuer: text('oidc_issuer'),
    oidcDiscoveryEndpoint: text('oidc_discovery_endpoint'),
    oidcMetadata: jsonb('oidc_metadata').$type<Record<string, unknown>>(),
    oidcClientId: text('oidc_client_id'),
    /** OIDC: the client secret, sealed under the master key (`v1.<iv>.<tag>.<ciphertext>`). */
    oidcClientSecretSealed: text('oidc_client_secret_sealed'),
    oidcScopes: jsonb('oidc_scopes').$type<string[]>().notNull().default(sql`'["openid","profile","email"]'::jsonb`),
    /** The last successful sign-in through the connection (a test sign-in activates it). */
    lastSignInAt: ts('last_sign_in_at'),
    ...timestamps,
  },
  (t) => [
    index('connections_environment_idx').on(t.environmentId, t.id),
    index('connections_organization_idx').on(t.environmentId, t.organizationId, t.id),
    index('connections_type_idx').on(t.environmentId, t.connectionType, t.id),
  ],
);
