import { randomUUID } from 'node:crypto';
import { rateLimitWindows } from '@atrium/db';
import { type RateLimitOptions, RateLimits } from '@atrium/rest-facade';
import { consumeSharedWindow } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';

/**
 * Two RateLimits over the one `rate_limit_windows` table stand for two processes (on both
 * drivers: the table is the same; only start-up picks the store). They take leases of 1 % of the
 * limit, so they never admit past it together, refuse at most a lease each early, and ask the
 * database once per lease, not once per request.
 */
const OPTIONS: RateLimitOptions = {
  requests: 6_000,
  windowSeconds: 3_600,
  organizationDeletes: 50,
  unauthenticated: 300,
  maxAddresses: 10_000,
  clientOrganizationRequests: 20_000,
};

describe('shared rate limits, counted in leases', () => {
  it('two processes admit the limit together within two leases, never past it, with one upsert per lease', async () => {
    const { deps } = await getWorld();
    let upserts = 0;
    const shared = {
      consume: (bucket: string, points: number, windowMs: number) => {
        upserts += 1;
        return consumeSharedWindow(deps, bucket, points, windowMs);
      },
    };
    const processes = [new RateLimits(OPTIONS, shared), new RateLimits(OPTIONS, shared)];
    const key = `shared-${randomUUID()}`;
    const caller = { kind: 'admin' as const, key };
    const cost = { requests: 1, organizationDeletes: 0 };
    let admitted = 0;
    let refused = 0;
    // 7,008 requests in 219 waves of 32 at once, alternating between the two processes.
    for (let sent = 0; sent < 7_008; sent += 32) {
      const wave = await Promise.all(
        Array.from({ length: 32 }, (_, i) => processes[(sent + i) % 2]?.admit(caller, [], cost)),
      );
      for (const answer of wave) {
        if (answer?.ok) admitted += 1;
        else refused += 1;
      }
    }
    const lease = Math.ceil(OPTIONS.requests * 0.01);
    expect(admitted).toBeLessThanOrEqual(OPTIONS.requests);
    expect(admitted).toBeGreaterThanOrEqual(OPTIONS.requests - 2 * lease);
    expect(admitted + refused).toBe(7_008);
    // One lease at a time per bucket and process: about limit / lease upserts, not one per request.
    expect(upserts).toBeLessThanOrEqual(OPTIONS.requests / lease + 2 * 32);
    const [row] = await deps.db
      .select({ used: rateLimitWindows.used })
      .from(rateLimitWindows)
      .where(eq(rateLimitWindows.bucket, `k:${key}`));
    expect(row?.used).toBeGreaterThanOrEqual(admitted);
  });

  it('a limit smaller than a hundred leases one point at a time: exact across processes', async () => {
    const { deps } = await getWorld();
    const shared = { consume: (b: string, p: number, w: number) => consumeSharedWindow(deps, b, p, w) };
    const options = { ...OPTIONS, requests: 40 };
    const processes = [new RateLimits(options, shared), new RateLimits(options, shared)];
    const caller = { kind: 'admin' as const, key: `small-${randomUUID()}` };
    const answers = [];
    for (let i = 0; i < 60; i++) {
      answers.push(await processes[i % 2]?.admit(caller, [], { requests: 1, organizationDeletes: 0 }));
    }
    expect(answers.filter((a) => a?.ok)).toHaveLength(40);
    expect(answers.slice(40).every((a) => a?.ok === false)).toBe(true);
  });
});
