// What is built once per process and shared by every request: database, log, caches, mailer.
import type { KeyObject } from 'node:crypto';
import type { Db, DbDriver, ReadReplica } from '@atrium/db';
import type { Logger } from 'pino';
import type { Config, TokenConfig } from './config.ts';

/** What this process holds in memory about an environment's signing keys. */
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
   * This process's caches: the identity of this object names them. Those emptied by
   * invalidations hang off it (invalidation/cache.ts `processCache`: API keys, SCIM tokens,
   * client ids' environments, signing keys); `clients` is the environment id of a client id
   * (signing/service.ts), a pair that never changes.
   */
  caches: {
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

/** Fresh, empty per-process caches. */
export function newCaches(): Deps['caches'] {
  return {
    clients: new Map(),
    invalidation: { listening: false, epoch: 0, handlers: new Map() },
  };
}
