import type { ServerResponse } from 'node:http';
import type { ApiError, Deps } from '@atrium/routers';
import { authenticate, type Identity, type Surface } from './authenticate.ts';
import type { Exchange } from './exchange.ts';
import type { Admitted, InFlightLimit } from './in-flight.ts';
import type { Admission, Cost, RateLimits } from './rate-limit.ts';

function refusalOf(admission: Admission): Refusal | undefined {
  return admission.ok ? undefined : { error: admission.error, retryAfter: admission.retryAfter, silent: false };
}

/**
 * Whose share of the turns a request takes (in-flight.ts): its environment's, for an API key or
 * a client token alike, so one environment's slow calls cannot take every turn from the others;
 * admin calls share one; a caller without a valid credential, its address's.
 */
export function shareOf(identity: Identity | undefined): string {
  if (identity === undefined) return '';
  switch (identity.kind) {
    case 'key':
      return identity.env.id;
    case 'client':
    case 'directory':
      return identity.caller.env.id;
    case 'admin':
      return 'admin';
    default:
      return `address:${identity.key}`;
  }
}

/** A request the limits turned away: its error and `Retry-After`, or nothing to answer (it left). */
export type Refusal = { error: ApiError; retryAfter: number; silent: boolean };

/** The turn of a request when the in-flight limit is off: nothing to give back. */
const UNLIMITED: Admitted = { ok: true, release: () => {} };

/**
 * The limits, one for every codec, called by the pipeline's steps alone (pipeline.ts): the
 * caller's identity (the authenticate step) is counted against its rate limit at the cost its
 * codec decoded, then (once the body is read) the request takes a turn to run (in-flight.ts),
 * after the rate limit so a refused key never waits.
 */
export class Limits {
  constructor(
    private readonly deps: Deps,
    readonly rate: RateLimits | undefined,
    readonly inFlight: InFlightLimit | undefined,
  ) {}

  /** The caller, when a rate limit needs it (else the procedures authenticate on their own). */
  identify(ex: Exchange, surface: Surface): Promise<Identity> | undefined {
    if (!this.rate) return undefined;
    return authenticate(this.deps, ex, surface);
  }

  /**
   * Counts the request against its caller's rate limit (adding the `RateLimit-*` headers to the answer's):
   * at once in memory, or a promise when the count is shared in PostgreSQL.
   */
  count(
    identity: Identity | undefined,
    headers: string[],
    cost: Cost,
  ): Refusal | undefined | Promise<Refusal | undefined> {
    if (!this.rate || !identity) return undefined;
    const admission = this.rate.admit(identity, headers, cost);
    return admission instanceof Promise ? admission.then(refusalOf) : refusalOf(admission);
  }

  /**
   * A turn to run for a request of `weight` (pages weigh more), now or when one frees up, in
   * the fair share of its caller's environment (`shareOf`); the pipeline releases it when the
   * call ends or is cut at its deadline.
   */
  async turn(res: ServerResponse, weight: number, share: string): Promise<Refusal | Admitted> {
    const entered = this.inFlight?.enter(res, weight, share);
    const turn = entered instanceof Promise ? await entered : entered;
    if (!turn) return UNLIMITED;
    if (turn.ok) return turn;
    return { error: turn.error, retryAfter: turn.retryAfter, silent: turn.reason === 'closed' };
  }
}
