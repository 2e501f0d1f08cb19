import { coalesced, type Db } from '@atrium/db';
import { describe, expect, it } from 'vitest';

/** A statement that answers when the test says so: what each call was sent, in order. */
function recorder(options: { max?: number; failing?: (item: number) => boolean; key?: (item: number) => string } = {}) {
  const sent: { kind: 'one' | 'many'; items: number[]; finish(): void }[] = [];
  const statement = <R>(kind: 'one' | 'many', items: number[], answer: () => R) =>
    new Promise<R>((resolve, reject) => {
      sent.push({
        kind,
        items,
        finish: () => {
          const bad = items.find((item) => options.failing?.(item));
          if (bad === undefined) resolve(answer());
          else reject(new Error(`bad ${bad}`));
        },
      });
    });
  const run = coalesced<number, number>({
    one: (_db, item) => statement('one', [item], () => item * 10),
    many: (_db, items) => statement('many', items, () => items.map((item) => item * 10)),
    max: options.max,
    key: options.key,
  });
  /** Finishes the statement in flight (the last sent) and lets its callers and the next send run. */
  const finishLast = async () => {
    sent.at(-1)?.finish();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { run, sent, finishLast };
}

/** A handle over its own client, as `coalesced` keys its queues. */
const handle = () => ({ $client: {} }) as unknown as Db;

describe('coalesced', () => {
  it('sends a lone item at once, and what arrives meanwhile as one statement after it', async () => {
    const { run, sent, finishLast } = recorder();
    const db = handle();
    const first = run(db, 1);
    expect(sent.map((s) => [s.kind, s.items])).toEqual([['one', [1]]]);
    const rest = [run(db, 2), run(db, 3), run(db, 4)];
    expect(sent).toHaveLength(1);
    await finishLast();
    expect(await first).toBe(10);
    expect(sent.map((s) => [s.kind, s.items])).toEqual([
      ['one', [1]],
      ['many', [2, 3, 4]],
    ]);
    await finishLast();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    // Nothing in flight any more: the next item goes at once, alone.
    const later = run(db, 5);
    expect(sent.at(-1)?.items).toEqual([5]);
    await finishLast();
    expect(await later).toBe(50);
  });

  it('caps a statement at max items; the rest go in the next', async () => {
    const { run, sent, finishLast } = recorder({ max: 2 });
    const db = handle();
    const all = [1, 2, 3, 4, 5, 6].map((item) => run(db, item));
    await finishLast();
    await finishLast();
    await finishLast();
    await finishLast();
    expect(sent.map((s) => s.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('retries a failed batch item by item: only the bad item fails, with its own error', async () => {
    const { run, sent, finishLast } = recorder({ failing: (item) => item === 3 });
    const db = handle();
    const first = run(db, 1);
    const batch = [run(db, 2), run(db, 3), run(db, 4)].map((p) => p.then(String, (e: Error) => e.message));
    await finishLast();
    await finishLast(); // the batch fails: 2, 3 and 4 are each sent alone
    expect(sent.slice(2).map((s) => [s.kind, s.items])).toEqual([
      ['one', [2]],
      ['one', [3]],
      ['one', [4]],
    ]);
    for (const s of sent.slice(2)) s.finish();
    expect(await first).toBe(10);
    expect(await Promise.all(batch)).toEqual(['20', 'bad 3', '40']);
  });

  it('keeps one queue per client: another client is not held behind the first', async () => {
    const { run, sent } = recorder();
    const a = handle();
    const b = handle();
    void run(a, 1);
    void run(b, 2);
    void run(a, 3);
    expect(sent.map((s) => s.items)).toEqual([[1], [2]]);
  });

  it("shares the queue of a handle derived from another (an idempotent request's, markingDb)", async () => {
    const { run, sent, finishLast } = recorder();
    const pool = handle();
    const derived = Object.create(pool) as Db;
    const first = run(pool, 1);
    const second = run(derived, 2);
    const third = run(pool, 3);
    expect(sent.map((s) => s.items)).toEqual([[1]]);
    await finishLast();
    await finishLast();
    expect(sent.map((s) => s.items)).toEqual([[1], [2, 3]]);
    expect(await Promise.all([first, second, third])).toEqual([10, 20, 30]);
  });

  it('keeps one queue per key of a client: items of another key are not held, nor sent with them', async () => {
    const { run, sent, finishLast } = recorder({ key: (item) => (item % 2 === 0 ? 'even' : 'odd') });
    const db = handle();
    const all = [1, 2, 3, 4, 5, 6].map((item) => run(db, item));
    // 1 and 2 go at once, each alone in its key; the rest wait for their own key's statement.
    expect(sent.map((s) => s.items)).toEqual([[1], [2]]);
    sent[0]?.finish();
    sent[1]?.finish();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(sent.slice(2).map((s) => s.items)).toEqual([
      [3, 5],
      [4, 6],
    ]);
    await finishLast();
    sent[2]?.finish();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60]);
    // Both keys idle again: the next item of either goes at once.
    void run(db, 7);
    expect(sent.at(-1)?.items).toEqual([7]);
  });
});
