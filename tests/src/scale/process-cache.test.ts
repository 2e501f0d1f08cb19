import {
  applyInvalidation,
  type Deps,
  invalidationDown,
  invalidationUp,
  newCaches,
  processCache,
} from '@atrium/routers';
import { describe, expect, it } from 'vitest';

// invalidation/cache.ts: the one per-process cache behind API keys, SCIM tokens, client ids'
// environments and signing keys. Only `deps.caches` is read, so a bare one stands for a process.

interface Held {
  env: string;
  org: string;
}

const processOf = () => ({ caches: newCaches() }) as unknown as Deps;
const notify = (deps: Deps, topic: string, id: string) => applyInvalidation(deps, JSON.stringify({ topic, id }));

const kind = (untilNotified: boolean, max = 3) =>
  processCache<Held>({
    max,
    untilNotified,
    forget: {
      environment: (v, id) => v.env === id,
      organization: (v, id) => v.org === id,
    },
  });

describe('processCache', () => {
  it('loads once, serves from memory within the TTL, and reads again after it', async () => {
    const deps = processOf();
    const cache = kind(false)(deps);
    let loads = 0;
    const load = async () => {
      loads += 1;
      return { env: 'e1', org: 'o1' };
    };
    const first = await cache.resolve('k', 1_000, 500, load);
    expect(await cache.resolve('k', 1_499, 500, load)).toBe(first);
    expect(loads).toBe(1);
    expect(await cache.resolve('k', 1_500, 500, load)).not.toBe(first);
    expect(loads).toBe(2);
  });

  it('never keeps a miss, so made-up keys cannot fill it', async () => {
    const cache = kind(false)(processOf());
    for (let i = 0; i < 10; i++)
      expect(await cache.resolve(`bogus${i}`, 0, 60_000, async () => undefined)).toBe(undefined);
    expect(cache.size).toBe(0);
  });

  it('holds at most `max` entries, forgetting the oldest first', async () => {
    const cache = kind(false, 2)(processOf());
    for (const key of ['a', 'b', 'c']) await cache.resolve(key, 0, 60_000, async () => ({ env: key, org: key }));
    expect(cache.size).toBe(2);
    expect(cache.has('a')).toBe(false);
    expect(cache.values().map((v) => v.env)).toEqual(['b', 'c']);
  });

  it('drops what a notification names, by topic, and everything on a reconnect', async () => {
    const deps = processOf();
    const cache = kind(false)(deps);
    await cache.resolve('a', 0, 60_000, async () => ({ env: 'e1', org: 'o1' }));
    await cache.resolve('b', 0, 60_000, async () => ({ env: 'e1', org: 'o2' }));
    await cache.resolve('c', 0, 60_000, async () => ({ env: 'e2', org: 'o3' }));
    notify(deps, 'organization', 'o2');
    expect(cache.values().map((v) => v.org)).toEqual(['o1', 'o3']);
    notify(deps, 'session', 'e2'); // a topic this kind does not hold
    notify(deps, 'environment', 'e1');
    expect(cache.values().map((v) => v.org)).toEqual(['o3']);
    invalidationUp(deps);
    expect(cache.size).toBe(0);
  });

  it('trusts an entry past its TTL only while listening, when every change is notified', async () => {
    const deps = processOf();
    const notified = kind(true)(deps);
    const bounded = kind(false)(deps);
    invalidationUp(deps);
    const held = { env: 'e1', org: 'o1' };
    await notified.resolve('k', 0, 10, async () => held);
    await bounded.resolve('k', 0, 10, async () => held);
    expect(notified.get('k', 1_000_000)).toBe(held);
    expect(bounded.get('k', 1_000_000)).toBe(undefined);
    invalidationDown(deps);
    expect(notified.get('k', 1_000_000)).toBe(undefined);
    expect(notified.get('k', 5)).toBe(held);
  });

  it('answers, but does not keep, a value read while a notification arrived', async () => {
    const deps = processOf();
    const cache = kind(false)(deps);
    const read = await cache.resolve('k', 0, 60_000, async () => {
      notify(deps, 'environment', 'e9'); // any notification: it may be about what was just read
      return { env: 'e1', org: 'o1' };
    });
    expect(read).toEqual({ env: 'e1', org: 'o1' });
    expect(cache.has('k')).toBe(false);
  });

  it('ends an entry when its own `alive` says so, whatever the TTL', async () => {
    const deps = processOf();
    const cache = processCache<{ until: number }>({
      max: 10,
      untilNotified: true,
      alive: (v, nowMs) => v.until > nowMs,
      forget: {},
    })(deps);
    invalidationUp(deps);
    await cache.resolve('k', 0, 60_000, async () => ({ until: 100 }));
    expect(cache.get('k', 99)).toEqual({ until: 100 });
    expect(cache.get('k', 100)).toBe(undefined);
  });

  it('is one cache per process: another `deps.caches` starts empty', async () => {
    const cacheOf = kind(false);
    const one = processOf();
    await cacheOf(one).resolve('k', 0, 60_000, async () => ({ env: 'e', org: 'o' }));
    expect(cacheOf(one).size).toBe(1);
    expect(cacheOf(processOf()).size).toBe(0);
  });
});
