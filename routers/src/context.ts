import type { KeyObject } from 'node:crypto';
import type { Db, DbDriver, FeatureFlags, ReadReplica } from '@atrium/db';
import type { Logger } from 'pino';
import type { ClientPrincipal } from './client-api/principal.ts';

/** What an authenticated request knows about its environment. */
export interface EnvironmentInfo {
  id: string;
  name: string;
  clientId: string;
  flags: FeatureFlags;
}

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
  /** Organization memberships of one user: deleted with the user in one transaction. */
  membershipsPerUser: number;
  /** Pending invitations into one organization: each is an e-mail sent on the tenant's behalf. */
  pendingInvitationsPerOrganization: number;
  /** IT contacts of one organization: listed on one page (the SDK's listItContacts reads one). */
  itContactsPerOrganization: number;
  /** API keys of one organization: deleted with it in one transaction. */
  organizationApiKeysPerOrganization: number;
  /** Environment roles of one environment: listed whole (the SDK's role lists have no pages). */
  rolesPerEnvironment: number;
  /** Custom roles of one organization: listed whole with the environment's roles. */
  rolesPerOrganization: number;
  /** Permissions of one environment: a role embeds the slugs of all of its permissions. */
  permissionsPerEnvironment: number;
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
  connectionsPerOrganization: 100,
  agentRegistrationsPerOrganization: 10_000,
  membershipsPerUser: 1_000,
  pendingInvitationsPerOrganization: 1_000,
  itContactsPerOrganization: 100,
  organizationApiKeysPerOrganization: 1_000,
  rolesPerEnvironment: 100,
  rolesPerOrganization: 100,
  permissionsPerEnvironment: 1_000,
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

/** What this process holds in memory about an environment's signing keys. */
export interface KeyCacheEntry {
  environmentId: string;
  clientId: string;
  /** Published keys, newest first, with their decrypted private keys. */
  keys: LoadedSigningKey[];
  /** The JWKS document and its ETag, computed once per entry. */
  jwks: { body: { keys: Record<string, unknown>[] }; etag: string };
  /** When this entry must be reloaded: the next key becoming active or retiring. */
  expiresAt: number;
  /** When it must be reloaded if this process does not hear invalidations (the TTL fallback). */
  staleAt: number;
}

export interface LoadedSigningKey {
  kid: string;
  activeFrom: number;
  retiresAt: number | null;
  publicKey: KeyObject;
  privateKey: KeyObject;
}

/** An e-mail as the service composes it (invitations/mail.ts). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Sends e-mail (server/src/mailer.ts: SMTP through nodemailer); tests inject their own. `send`
 * throws `MailRecipientRefused` when the mail server refuses the recipient for good; any other
 * error is a failure that a later try may not meet.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The mail server refused the recipient for good (an SMTP 5xx reply to RCPT TO): no mail can reach it. */
export class MailRecipientRefused extends Error {
  constructor(
    readonly recipient: string,
    readonly reply: string,
  ) {
    super(`the mail server refused ${recipient}: ${reply}`);
    this.name = 'MailRecipientRefused';
  }
}

/**
 * Everything a procedure may use that is not part of the request: built once at start-up
 * (or once per test worker) and shared by every request. Tests replace `now` to move time.
 */
export interface Deps {
  db: Db;
  driver: DbDriver;
  /**
   * A streaming read replica (`DATABASE_REPLICA_URL`): API-key queries read from it when it is
   * up and has replayed the key's own writes (see trpc.ts `routedReads`); everything else uses `db`.
   */
  replica?: ReadReplica | undefined;
  now: () => Date;
  log: Logger;
  config: Config;
  tokens: TokenConfig;
  /** Outgoing e-mail, when SMTP is configured; without it invitations are stored and evented only. */
  mailer?: Mailer | undefined;
  /** Where a session's IP address is, when a GeoIP city database is configured (`GEOIP_DATABASE`). */
  geo?: GeoLocator | undefined;
  /**
   * Per-process caches: API keys by secret hash (auth/service.ts); signing keys by environment
   * id and the environment id of a client id (signing/service.ts).
   */
  caches: {
    apiKeys: Map<string, { env: EnvironmentInfo; keyId: string; expiresAt: number }>;
    signingKeys: Map<string, KeyCacheEntry>;
    clients: Map<string, string>;
    /** Whether this process hears invalidations now (invalidation/service.ts). */
    invalidation: InvalidationState;
  };
}

/**
 * The invalidation channel as this process knows it. While `listening`, cache entries live
 * until a notification names them (their time bounds are the fallback for when it drops);
 * `epoch` moves on every notification and reconnect, so a load that raced one is not cached.
 * Handlers get the id a notification names (`*` after a reconnect: forget everything).
 */
export interface InvalidationState {
  listening: boolean;
  epoch: number;
  handlers: Map<string, Set<(id: string) => void>>;
}

/** A city and its country (ISO 3166-1 alpha-2), as the UserSessions widget shows a session's location. */
export interface GeoLocation {
  cityName: string;
  countryISOCode: string;
}

/** Looks an IP address up in a local GeoIP database; null when it has no city for it. */
export interface GeoLocator {
  locate(ip: string): GeoLocation | null;
}

/** Where a request came from, as the transport saw it: the socket's address and the User-Agent. */
export interface RequestDevice {
  ipAddress: string | null;
  userAgent: string | null;
}

/** The inner context: what a caller (tRPC, REST or a test) hands to the router. */
export interface Context {
  deps: Deps;
  /** The raw `Authorization` header, resolved lazily by the procedures that need it. */
  authorization: string | undefined;
  requestId?: string | undefined;
  /** The raw `Idempotency-Key` header; the idempotency step (idempotency/middleware.ts) reads it. */
  idempotencyKey?: string | undefined;
  /** The environment of `authorization`, when the transport has resolved it already (once per request). */
  environment?: EnvironmentInfo | undefined;
  /**
   * The caller of a client surface, when the transport has verified its token already (once per
   * request, for the per-user limits); `clientProcedure` verifies it otherwise.
   */
  client?: { env: EnvironmentInfo; principal: ClientPrincipal } | undefined;
  /** Where the request came from, which a client token's session records (`noteSessionUse`). */
  device?: RequestDevice | undefined;
  /** The raw `x-elevated-access-token` header the widgets send on mutations once the user proved a code. */
  elevatedAccess?: string | undefined;
  /** Headers the procedures ask the transport to send (`Idempotent-Replayed: true` on a replay). */
  responseHeaders: Record<string, string>;
  /**
   * The operator console's cookie and CSRF header, when the request came with the cookie and no
   * `Authorization`: admin procedures accept them instead of an admin token (console/service.ts).
   */
  console?: { session: string | undefined; csrf: string | undefined } | undefined;
}

export interface IdempotencyClaim {
  environmentId: string;
  key: string;
}

/** What a service function receives: the database, the clock, and the caller's environment. */
export interface Scope {
  db: Db;
  env: EnvironmentInfo;
  now: () => Date;
  deps: Deps;
  /**
   * The request's Idempotency-Key claim, when it has one: its writes mark the key `committed`
   * as they commit (see idempotency/service.ts `markingDb` and events/record.ts `writeWithEvent`).
   */
  idempotency?: IdempotencyClaim | undefined;
  /** Who acts, recorded on every event of the call: `admin` on the admin surface (console, CLI). */
  actor?: 'admin' | undefined;
  /** Why, when the operator gave a reason (manual domain verification); recorded on the events too. */
  reason?: string | undefined;
}

export function createInnerContext(
  deps: Deps,
  authorization?: string,
  requestId?: string,
  idempotencyKey?: string,
  environment?: EnvironmentInfo,
): Context {
  return { deps, authorization, requestId, idempotencyKey, environment, responseHeaders: {} };
}

export const DEFAULT_CONFIG: Config = { apiKeyCacheTtlMs: 2_000, requestTimeoutMs: 15_000 };

export const DEFAULT_TOKEN_SETTINGS: Omit<TokenConfig, 'masterKey' | 'issuer'> = {
  rotationDelayMs: 5 * 60_000,
  keyCacheTtlMs: 60_000,
  clientTokenTtlSeconds: 15 * 60,
  agentAccessTokenTtlSeconds: 60 * 60,
};

/** Fresh, empty per-process caches. */
export function newCaches(): Deps['caches'] {
  return {
    apiKeys: new Map(),
    signingKeys: new Map(),
    clients: new Map(),
    invalidation: { listening: false, epoch: 0, handlers: new Map() },
  };
}
