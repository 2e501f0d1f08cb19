import type { Db, DbDriver, FeatureFlags } from '@atrium/db';
import type { Logger } from 'pino';

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
}

/**
 * Everything a procedure may use that is not part of the request: built once at start-up
 * (or once per test worker) and shared by every request. Tests replace `now` to move time.
 */
export interface Deps {
  db: Db;
  driver: DbDriver;
  now: () => Date;
  log: Logger;
  config: Config;
  /** Per-process caches keyed by secret hash; see auth/service.ts. */
  caches: { apiKeys: Map<string, { env: EnvironmentInfo; expiresAt: number }> };
}

/** The inner context: what a caller (tRPC, REST or a test) hands to the router. */
export interface Context {
  deps: Deps;
  /** The raw `Authorization` header, resolved lazily by the procedures that need it. */
  authorization: string | undefined;
  requestId?: string | undefined;
  /**
   * The `Idempotency-Key` claim of this request, when it carries one: the request's
   * transactions mark the key `committed` before they commit, so a write whose response was
   * lost (the process died) is never run a second time.
   */
  idempotency?: IdempotencyClaim | undefined;
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
}

export function createInnerContext(
  deps: Deps,
  authorization?: string,
  requestId?: string,
  idempotency?: IdempotencyClaim,
): Context {
  return { deps, authorization, requestId, idempotency };
}

export const DEFAULT_CONFIG: Config = { apiKeyCacheTtlMs: 2_000, requestTimeoutMs: 15_000 };
