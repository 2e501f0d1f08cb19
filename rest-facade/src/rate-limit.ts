import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@atrium/routers';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateLimitOptions {
  /** Requests per API key per window (default 6,000). */
  requests: number;
  /** Window length in seconds (default 60). */
  windowSeconds: number;
  /** `DELETE /organizations/:id` per API key per window (default 50). */
  organizationDeletes: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitOptions = { requests: 6_000, windowSeconds: 60, organizationDeletes: 50 };

/**
 * What one HTTP request counts against its key: a REST call is one request (and one delete when
 * it is `DELETE /organizations/:id`); a batched tRPC call counts each procedure it runs.
 */
export interface Cost {
  requests: number;
  organizationDeletes: number;
}

/** What a request may do: go on, or stop here with a 429 (already sent). */
export type Admission = { ok: true } | { ok: false; error: ApiError; retryAfter: number };

/**
 * Fixed-window limits per API key, counted in this process by `rate-limiter-flexible`. The key
 * is the SHA-256 of the bearer token (never the token itself); requests without one are
 * counted per remote address. Every answer carries the IETF draft `RateLimit-*` headers.
 */
export class RateLimits {
  private readonly all: RateLimiterMemory;
  private readonly deletes: RateLimiterMemory;
  private readonly allPolicy: string;
  private readonly deletesPolicy: string;

  constructor(readonly options: RateLimitOptions = DEFAULT_RATE_LIMITS) {
    this.all = new RateLimiterMemory({ keyPrefix: 'all', points: options.requests, duration: options.windowSeconds });
    this.deletes = new RateLimiterMemory({
      keyPrefix: 'org_delete',
      points: options.organizationDeletes,
      duration: options.windowSeconds,
    });
    this.allPolicy = `${options.requests};w=${options.windowSeconds}`;
    this.deletesPolicy = `${options.organizationDeletes};w=${options.windowSeconds}`;
  }

  private static keyOf(req: IncomingMessage): string {
    const auth = req.headers.authorization;
    if (auth) return hash('sha256', auth, 'base64url');
    return `ip:${req.socket.remoteAddress ?? 'unknown'}`;
  }

  /** Counts the request against its key's limits and sets the `RateLimit-*` headers. */
  async admit(req: IncomingMessage, res: ServerResponse, cost: Cost): Promise<Admission> {
    const key = RateLimits.keyOf(req);
    let policy = this.allPolicy;
    let limit = this.options.requests;
    try {
      let result = await this.all.consume(key, Math.max(1, cost.requests));
      if (cost.organizationDeletes > 0) {
        policy = this.deletesPolicy;
        limit = this.options.organizationDeletes;
        result = await this.deletes.consume(key, cost.organizationDeletes);
      }
      setHeaders(res, policy, limit, result);
      return { ok: true };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setHeaders(res, policy, limit, rejection);
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      return {
        ok: false,
        retryAfter,
        error: new ApiError(429, 'rate_limit_exceeded', `Too many requests. Retry after ${retryAfter} seconds.`),
      };
    }
  }
}

function setHeaders(res: ServerResponse, policy: string, limit: number, result: RateLimiterRes): void {
  res.setHeader('RateLimit-Policy', policy);
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(result.remainingPoints));
  res.setHeader('RateLimit-Reset', String(Math.max(0, Math.ceil(result.msBeforeNext / 1000))));
}
