// The scope a service works in: the database, the clock and the caller's environment.
import type { Db } from '@atrium/db';
import type { Deps } from './deps.ts';
import type { EnvironmentInfo } from './environment.ts';

export type { EnvironmentInfo } from './environment.ts';

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
