import { ApiError, type SharedCount } from '@atrium/routers';
import type { Identity } from './authenticate.ts';

export interface RateLimitOptions {
  /** Requests per API key (or admin token) per window (default 6,000). */
  requests: number;
  /** Window length in seconds (default 60). */
  windowSeconds: number;
  /** `DELETE /organizations/:id` per API key per window (default 50). */
  organizationDeletes: number;
  /** Requests per client address per window whose credentials are missing or fail (default 300). */
  unauthenticated: number;
  /** Client addresses counted at once; past it the least recently seen is forgotten (default 10,000). */
  maxAddresses: number;
  /**
   * Requests per organization per window over client and widget tokens (default 20,000), on top
   * of each token user's own `requests`: many users of one organization share this.
   */
  clientOrganizationRequests: number;
}

/**
 * Where keys and admin tokens are counted when several processes share the limit: PostgreSQL's
 * `rate_limit_windows` (routers' `consumeSharedWindow`), one upsert per lease of points.
 */
export interface SharedWindows {
  consume(bucket: string, points: number, windowMs: number): Promise<SharedCount>;
}

export const DEFAULT_RATE_LIMITS: RateLimitOptions = {
  requests: 6_000,
  windowSeconds: 60,
  organizationDeletes: 50,
  unauthenticated: 300,
  maxAddresses: 10_000,
  clientOrganizationRequests: 20_000,
};

/** Keys and admin tokens counted at once. Only credentials that authenticated get here, so it is a backstop. */
const MAX_KEYS = 100_000;

/** The share of a shared limit one lease takes (bench/README.md, "Shared rate limits"). */
const LEASE_SHARE = 0.01;

/** Points this process took from a shared window and has not spent yet. */
interface Lease {
  left: number;
  /** The window's points used, this lease included, when it was taken. */
  used: number;
  /** When the window ends (this process's clock). */
  until: number;
}

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

interface Window {
  used: number;
  resetAt: number;
}

interface Count {
  ok: boolean;
  remaining: number;
  msBeforeNext: number;
}

/** One kind of counter: its shared-bucket prefix, its in-memory windows, its policy header and limit. */
interface Bucket {
  prefix: string;
  windows: FixedWindows;
  policy: string;
  limit: number;
}

/** The second bucket a request counts against, under which key, by how much. */
interface Second {
  bucket: Bucket;
  key: string;
  points: number;
}

/**
 * Fixed-window counters in one Map with a hard cap on its size, and no timers: a window that has
 * ended is dropped when its key is next seen, and past the cap the least recently seen key is
 * forgotten (Map order, refreshed on each hit). An LRU rather than refusing newcomers at the cap:
 * memory stays flat however many keys arrive, and a flood of new keys can only reset the counts
 * of keys idle longer than all of them, never block a caller it has not seen.
 */
export class FixedWindows {
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly points: number,
    readonly windowMs: number,
    readonly maxKeys: number,
  ) {}

  /** Keys counted now (at most `maxKeys`). */
  get size(): number {
    return this.windows.size;
  }

  /** Counts `points` against `key`; refused attempts count too, so a flood stays refused. */
  consume(key: string, points: number, now = Date.now()): Count {
    let window = this.windows.get(key);
    if (window) this.windows.delete(key);
    if (!window || window.resetAt <= now) {
      window = { used: 0, resetAt: now + this.windowMs };
      if (this.windows.size >= this.maxKeys) {
        const oldest = this.windows.keys().next();
        if (!oldest.done) this.windows.delete(oldest.value);
      }
    }
    this.windows.set(key, window);
    window.used = Math.min(window.used + points, Number.MAX_SAFE_INTEGER);
    return {
      ok: window.used <= this.points,
      remaining: Math.max(0, this.points - window.used),
      msBeforeNext: window.resetAt - now,
    };
  }
}

/**
 * Fixed-window limits. The caller is authenticated first: an API key
 * counts against its key id (however its header is spelled), an admin token over `/trpc` against
 * the token; requests whose credentials are missing or fail count against the client address with the stricter `unauthenticated` limit, in a store capped at `maxAddresses`.
 * Every answer carries the IETF draft `RateLimit-*` headers.
 *
 * Keys and admin tokens are counted in this process, or, given `shared`, in PostgreSQL, so that
 * N processes allow the limit once, not N times: fixed windows on the database's clock. A process
 * takes the points it needs in leases of 1 % of the limit (one upsert per lease, not per request)
 * and spends them locally, so the processes together never pass the limit, and may refuse at most
 * a lease each early. A bucket the database has answered exhausted is refused here until its
 * window ends, with no query. Addresses (failed or missing credentials) are always counted in
 * memory: a bogus-key flood must cost no query per request here (the credentials' own lookups
 * are batched, routers/src/lib/batched-lookup.ts). Only requests whose credentials are missing or
 * fail reach an address's count, so it never refuses a valid credential.
 */
export class RateLimits {
  private readonly keys: FixedWindows;
  private readonly deletes: FixedWindows;
  private readonly addresses: FixedWindows;
  private readonly organizations: FixedWindows;
  private readonly keyPolicy: string;
  private readonly organizationPolicy: string;
  private readonly deletesPolicy: string;
  private readonly addressPolicy: string;
  private readonly windowMs: number;
  /** Shared buckets the database last answered exhausted, with when their window ends (bounded). */
  private readonly exhausted = new Map<string, number>();
  /** Leases of shared buckets (bounded), and the lease being taken per bucket. */
  private readonly leases = new Map<string, Lease>();
  private readonly leasing = new Map<string, Promise<unknown>>();
  /** The buckets, made once (a request counts against one or two of them). */
  private readonly buckets: Record<'requests' | 'deletes' | 'organization', Bucket>;
  /** How a bucket is counted: in PostgreSQL (`countShared`) or in this process. */
  private readonly counted: (bucket: Bucket, key: string, points: number) => Count | Promise<Count>;

  constructor(
    readonly options: RateLimitOptions = DEFAULT_RATE_LIMITS,
    private readonly shared?: SharedWindows,
  ) {
    const windowMs = options.windowSeconds * 1000;
    this.windowMs = windowMs;
    this.keys = new FixedWindows(options.requests, windowMs, MAX_KEYS);
    this.deletes = new FixedWindows(options.organizationDeletes, windowMs, MAX_KEYS);
    this.addresses = new FixedWindows(options.unauthenticated, windowMs, options.maxAddresses);
    this.organizations = new FixedWindows(options.clientOrganizationRequests, windowMs, MAX_KEYS);
    this.organizationPolicy = `${options.clientOrganizationRequests};w=${options.windowSeconds}`;
    this.keyPolicy = `${options.requests};w=${options.windowSeconds}`;
    this.deletesPolicy = `${options.organizationDeletes};w=${options.windowSeconds}`;
    this.addressPolicy = `${options.unauthenticated};w=${options.windowSeconds}`;
    this.buckets = {
      requests: { prefix: 'k', windows: this.keys, policy: this.keyPolicy, limit: options.requests },
      deletes: { prefix: 'd', windows: this.deletes, policy: this.deletesPolicy, limit: options.organizationDeletes },
      organization: {
        prefix: 'o',
        windows: this.organizations,
        policy: this.organizationPolicy,
        limit: options.clientOrganizationRequests,
      },
    };
    this.counted = shared
      ? (bucket, key, points) => this.countShared(shared, `${bucket.prefix}:${key}`, points, bucket.limit)
      : (bucket, key, points) => bucket.windows.consume(key, points);
  }

  /** How many client addresses are counted now (never more than `maxAddresses`). */
  get trackedAddresses(): number {
    return this.addresses.size;
  }

  /** How many keys and admin tokens are counted now. */
  get trackedKeys(): number {
    return this.keys.size;
  }

  /** Where keys are counted: `postgres` (shared by every process) or `memory` (this process). */
  get store(): 'postgres' | 'memory' {
    return this.shared ? 'postgres' : 'memory';
  }

  /**
   * Counts the request against its caller's limits and adds the `RateLimit-*` headers to the
   * answer's `[name, value, ...]` list (exchange.ts `writeHead`): a key's
   * requests, then (when still allowed) its organization deletes, or a client token's
   * organization; the headers name the bucket that refused, else the one with less left.
   */
  admit(caller: Identity, headers: string[], cost: Cost): Admission | Promise<Admission> {
    const requests = Math.max(1, cost.requests);
    if (caller.kind === 'address') {
      const count = this.addresses.consume(caller.key, requests);
      return answer(headers, this.addressPolicy, this.options.unauthenticated, count);
    }
    return this.admitBoth(headers, requests, this.secondBucket(caller, cost), this.counted, caller.key);
  }

  /** What a caller counts besides its requests: organization deletes, or a client token's organization. */
  private secondBucket(caller: Exclude<Identity, { kind: 'address' }>, cost: Cost): Second | undefined {
    if (caller.kind === 'client') {
      return { bucket: this.bucketOf('organization'), key: caller.organizationKey, points: Math.max(1, cost.requests) };
    }
    if (cost.organizationDeletes > 0) {
      return { bucket: this.bucketOf('deletes'), key: caller.key, points: cost.organizationDeletes };
    }
    return undefined;
  }

  private bucketOf(name: 'requests' | 'deletes' | 'organization'): Bucket {
    return this.buckets[name];
  }

  /** The caller's own bucket, then (when it allowed the request) the second one. */
  private admitBoth<R extends Count | Promise<Count>>(
    headers: string[],
    requests: number,
    second: Second | undefined,
    counted: (bucket: Bucket, key: string, points: number) => R,
    key: string,
  ): Admission | Promise<Admission> {
    const own = this.bucketOf('requests');
    const settle = (first: Count, other: Count | undefined): Admission => {
      const byOther = second && other && first.ok && (!other.ok || other.remaining < first.remaining);
      return byOther
        ? answer(headers, second.bucket.policy, second.bucket.limit, other)
        : answer(headers, own.policy, own.limit, first);
    };
    const firstCount = counted(own, key, requests);
    const then = (first: Count): Admission | Promise<Admission> => {
      if (!first.ok || !second) return settle(first, undefined);
      const other = counted(second.bucket, second.key, second.points);
      return other instanceof Promise ? other.then((o) => settle(first, o)) : settle(first, other as Count);
    };
    return firstCount instanceof Promise ? firstCount.then(then) : then(firstCount as Count);
  }

  /**
   * Counts against a shared bucket: at once (no promise) while it is known exhausted or its lease
   * covers the points, which is most requests; else through a new lease (`leaseShared`).
   */
  private countShared(shared: SharedWindows, bucket: string, points: number, limit: number): Count | Promise<Count> {
    const now = Date.now();
    const until = this.exhausted.get(bucket);
    if (until !== undefined) {
      if (until > now) return { ok: false, remaining: 0, msBeforeNext: until - now };
      this.exhausted.delete(bucket);
    }
    return this.spendLease(bucket, points, limit, now) ?? this.leaseShared(shared, bucket, points, limit);
  }

  /** A new lease of the shared bucket (or a share of the one being taken), then the points spent from it. */
  private async leaseShared(shared: SharedWindows, bucket: string, points: number, limit: number): Promise<Count> {
    // One lease at a time per bucket: requests arriving meanwhile wait for it and spend from it.
    const pending = this.leasing.get(bucket);
    if (pending) {
      await pending;
      const after = this.spendLease(bucket, points, limit, Date.now());
      if (after) return after;
    }
    const chunk = Math.max(points, Math.ceil(limit * LEASE_SHARE));
    const taking = shared.consume(bucket, chunk, this.windowMs);
    this.leasing.set(
      bucket,
      taking.catch(() => undefined),
    );
    let used: number;
    let msLeft: number;
    try {
      ({ used, msLeft } = await taking);
    } finally {
      this.leasing.delete(bucket);
    }
    // Past the limit, only what was left below it is granted.
    const granted = chunk - Math.max(0, used - limit);
    const end = Date.now() + msLeft;
    if (granted < points) {
      remember(this.exhausted, bucket, end);
      this.leases.delete(bucket);
      return { ok: false, remaining: 0, msBeforeNext: msLeft };
    }
    remember(this.leases, bucket, { left: granted - points, used, until: end });
    return { ok: true, remaining: Math.max(0, limit - used + granted - points), msBeforeNext: msLeft };
  }

  /** Spends `points` from the bucket's lease, if it has that many left in the current window. */
  private spendLease(bucket: string, points: number, limit: number, now: number): Count | undefined {
    const lease = this.leases.get(bucket);
    if (!lease || lease.until <= now || lease.left < points) return undefined;
    lease.left -= points;
    return { ok: true, remaining: Math.max(0, limit - lease.used + lease.left), msBeforeNext: lease.until - now };
  }
}

/** Sets an entry of a map bounded by MAX_KEYS, forgetting the oldest past it. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  if (!map.has(key) && map.size >= MAX_KEYS) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

function answer(headers: string[], policy: string, limit: number, count: Count): Admission {
  headers.push(
    'RateLimit-Policy',
    policy,
    'RateLimit-Limit',
    String(limit),
    'RateLimit-Remaining',
    String(count.remaining),
    'RateLimit-Reset',
    String(Math.max(0, Math.ceil(count.msBeforeNext / 1000))),
  );
  if (count.ok) return { ok: true };
  const retryAfter = Math.max(1, Math.ceil(count.msBeforeNext / 1000));
  return {
    ok: false,
    retryAfter,
    error: new ApiError(429, 'rate_limit_exceeded', `Too many requests. Retry after ${retryAfter} seconds.`),
  };
}
