import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * What patches/postgres+3.4.9.patch must keep and fix in postgres.js's `Queue`, the structure
 * its pool keeps connections (and waiting queries) in. Under load the two statement connections
 * take turns in the pool's `busy` queue, which then never drains: unpatched, every turn left a
 * hole in the queue's array (50,000 after a 13-s bench scenario, one per statement, without
 * end), and every connection that fell idle was looked for from the array's start.
 */
interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}
type QueueOf = <T>(initial?: T[]) => Queue<T>;

const driverDir = dirname(createRequire(import.meta.url).resolve('postgres')); // …/postgres/cjs/src
const copies: [string, () => Promise<QueueOf>][] = [
  ['ESM (src/)', async () => (await import(pathToFileURL(join(driverDir, '../../src/queue.js')).href)).default],
  ['CommonJS (cjs/src/)', async () => createRequire(import.meta.url)(join(driverDir, 'queue.js')) as QueueOf],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(copies)('the patched postgres.js Queue, %s', (_name, load) => {
  it('is first in, first out, and removes what is queued', async () => {
    const Queue = await load();
    const q = Queue<string>();
    q.push('a');
    q.push('b');
    q.push('c');
    expect(q.length).toBe(3);
    expect(q.shift()).toBe('a');
    expect(q.remove('c')).toBe('c');
    expect(q.remove('a')).toBeNull(); // shifted out already
    expect(q.length).toBe(1);
    expect(q.shift()).toBe('b');
    expect(q.length).toBe(0);
    q.push('d');
    expect(q.shift()).toBe('d');
  });

  it('stays small and in order when two connections take turns without it ever draining', async () => {
    const Queue = await load();
    const q = Queue<{ id: number }>();
    const c1 = { id: 1 };
    const c2 = { id: 2 };
    q.push(c1);
    q.push(c2);
    // What the pool does per statement: `go(busy.shift(), query)` then `move(c, busy)`.
    for (let turn = 0; turn < 100_000; turn++) {
      const c = q.shift();
      if (!c) throw new Error('the queue lost a connection');
      if (q.remove(c) !== null || q.length !== 1) throw new Error(`turn ${turn}: the queue lost count`);
      q.push(c);
    }
    expect(q.length).toBe(2);
    // The array `remove` searches, and from where: held in check, not one slot per turn.
    let searched: { length: number; from: number } | undefined;
    const indexOf = Array.prototype.indexOf;
    vi.spyOn(Array.prototype, 'indexOf').mockImplementation(function (this: unknown[], item, from) {
      if (item === c2) searched = { length: this.length, from: from ?? 0 };
      return indexOf.call(this, item, from);
    });
    expect(q.remove(c2)).toBe(c2);
    expect(searched).toBeDefined();
    // The patch compacts at 1,024 shifted slots: the array never holds more than those and the two queued.
    expect(searched?.length).toBeLessThanOrEqual(1_026);
    expect((searched?.length ?? 0) - (searched?.from ?? 0)).toBe(2);
    expect(q.length).toBe(1);
    expect(q.shift()).toBe(c1);
    expect(q.length).toBe(0);
  });
});
