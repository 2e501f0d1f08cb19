// What an operator configures (server/src/config.ts reads it from the environment).
export interface Config {
  /** How long a resolved API key stays cached in this process (revocation bound elsewhere). */
  apiKeyCacheTtlMs: number;
  /**
   * The longest a procedure may run before it answers 503 (default 15 s; 0 turns it off). The
   * database driver has connect and statement timeouts, but a query queued on a connection the
   * server has just killed can stay pending for ever (postgres.js 3.4.9), so the request
   * carries its own deadline.
   */
  requestTimeoutMs?: number;
  /** Accept webhook endpoints on private, loopback and link-local addresses (tests, local setups). */
  webhooksAllowPrivate?: boolean;
  /** Per-tenant limits (`ATRIUM_QUOTA_<NAME>`); a missing one takes its `DEFAULT_QUOTAS` value. */
  quotas?: Partial<Quotas>;
  /**
   * The accept link of an invitation (`ATRIUM_INVITATION_URL`), `{token}` standing for its token;
   * unset, a link on this server (`<issuer>/invite?invitation_token=<token>`).
   */
  invitationUrl?: string;
  /**
   * How long a pending domain may go without a successful DNS check before it fails
   * (`DNS_VERIFICATION_PERIOD_SECONDS`); unset, `DEFAULT_VERIFICATION_PERIOD_SECONDS` (30 days).
   */
  dnsVerificationPeriodSeconds?: number;
  /**
   * The clock skew allowed between this server and an SSO identity provider
   * (`ATRIUM_SSO_CLOCK_SKEW_SECONDS`); unset, the contract's 60 s (sso/saml/service.ts).
   */
  ssoClockSkewSeconds?: number;
}

/**
 * What one tenant may create of the things that are read whole (embedded in a response, listed
 * without pagination) or fanned out per request. Everything else is read by keyset pagination.
 */
export interface Quotas {
  /** Domains of one organization: every organization read embeds them all. */
  domainsPerOrganization: number;
  /** Webhook endpoints of one environment: every event fans out to them. */
  webhookEndpointsPerEnvironment: number;
  /** Domains of one environment pending a DNS check: the worker's queue. */
  pendingVerificationsPerEnvironment: number;
  /** API keys (revoked ones included) of one environment: listed whole by the admin CLI. */
  apiKeysPerEnvironment: number;
  /** Groups of one organization: deleted with it in one transaction. */
  groupsPerOrganization: number;
  /** Connections of one organization: deleted with it in one transaction. */
  connectionsPerOrganization: number;
  /** Agent registrations of one organization: deleted with it in one transaction. */
  agentRegistrationsPerOrganization: number;
  /** Directories of one organization (issue #36): its IT admin creates them from the admin portal. */
  directoriesPerOrganization: number;
  /** Users of one directory (issue #36): its identity provider creates them over SCIM. */
  directoryUsersPerDirectory: number;
  /** Groups of one directory: likewise. */
  directoryGroupsPerDirectory: number;
  /** Organization memberships of one user: deleted with the user in one transaction. */
  membershipsPerUser: number;
  /** Pending invitations into one organization: each is an e-mail sent on the tenant's behalf. */
  pendingInvitationsPerOrganization: number;
  /** IT contacts of one organization: listed on one page (the SDK's listItContacts reads one). */
  itContactsPerOrganization: number;
  /** API keys of one organization: deleted with it in one transaction. */
  organizationApiKeysPerOrganization: number;
  /** API keys one member holds in one organization (user API keys): deleted with the membership. */
  userApiKeysPerMembership: number;
  /** Environment roles of one environment: listed whole (the SDK's role lists have no pages). */
  rolesPerEnvironment: number;
  /** Custom roles of one organization: listed whole with the environment's roles. */
  rolesPerOrganization: number;
  /** Permissions of one environment: a role embeds the slugs of all of its permissions. */
  permissionsPerEnvironment: number;
  /** Audit log actions with schemas of one environment (issue #38): each event reads its action's. */
  auditLogActionsPerEnvironment: number;
  /** Schema versions of one audit log action. */
  auditLogSchemaVersionsPerAction: number;
  /**
   * Resends of one invitation (one invitee of one organization) per day, each an e-mail to a
   * third party's address: a daily rate, so over it is 429 `rate_limit_exceeded`, not 422.
   */
  invitationResendsPerDay: number;
  /** Invitation e-mails (sends and resends) of one organization per day; a daily rate too (429). */
  invitationMailsPerOrganizationPerDay: number;
}

export const DEFAULT_QUOTAS: Quotas = {
  domainsPerOrganization: 1_000,
  webhookEndpointsPerEnvironment: 100,
  pendingVerificationsPerEnvironment: 10_000,
  apiKeysPerEnvironment: 1_000,
  groupsPerOrganization: 10_000,
  connectionsPerOrganization: 50,
  agentRegistrationsPerOrganization: 10_000,
  directoriesPerOrganization: 10,
  directoryUsersPerDirectory: 100_000,
  directoryGroupsPerDirectory: 10_000,
  membershipsPerUser: 1_000,
  pendingInvitationsPerOrganization: 1_000,
  itContactsPerOrganization: 100,
  organizationApiKeysPerOrganization: 1_000,
  userApiKeysPerMembership: 100,
  rolesPerEnvironment: 100,
  rolesPerOrganization: 100,
  permissionsPerEnvironment: 1_000,
  auditLogActionsPerEnvironment: 100,
  auditLogSchemaVersionsPerAction: 10,
  invitationResendsPerDay: 5,
  invitationMailsPerOrganizationPerDay: 1_000,
};

/** Signing keys and the tokens they sign (see signing/service.ts). */
export interface TokenConfig {
  /** 32 bytes: the AES-256-GCM key that encrypts private signing keys at rest. */
  masterKey: Buffer;
  /** `iss` of every token this service signs (its public base URL). */
  issuer: string;
  /** A rotated-in key is published at once and signs only after this delay. */
  rotationDelayMs: number;
  /** How long this process serves an environment's keys from memory before reloading them. */
  keyCacheTtlMs: number;
  /** Lifetime of a client token (at most 15 minutes). */
  clientTokenTtlSeconds: number;
  /** Lifetime of an agent access token. */
  agentAccessTokenTtlSeconds: number;
}

export const DEFAULT_CONFIG: Config = { apiKeyCacheTtlMs: 2_000, requestTimeoutMs: 15_000 };

export const DEFAULT_TOKEN_SETTINGS: Omit<TokenConfig, 'masterKey' | 'issuer'> = {
  rotationDelayMs: 5 * 60_000,
  keyCacheTtlMs: 60_000,
  clientTokenTtlSeconds: 15 * 60,
  agentAccessTokenTtlSeconds: 60 * 60,
};
