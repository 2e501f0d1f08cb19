/**
 * Lookups of one kind of credential by key (a secret's hash, a client id), one query in flight at
 * a time per process: keys asked for while a query runs wait and go together in the next one, at
 * most `maxBatch` a query. After a query that found nothing (a flood of bogus credentials looks
 * like that) the next one waits `missGapMs`, so a flood costs at most one query per gap (50 a
 * second) however fast it comes, while a real credential among it is still looked up, so no limit ever has to
 * refuse it unread. When nothing is running a lookup starts at once, so a single one waits for
 * nothing.
 */
export class BatchedLookup<V> {
  private readonly waiting = new Map<string, Array<(result: Settled<V>) => void>>();
  private running = false;

  constructor(
    private readonly load: (keys: string[]) => Promise<Map<string, V>>,
    private readonly maxBatch = 512,
    private readonly missGapMs = 20,
  ) {}

  /** The value of `key`, or undefined when the store holds none. */
  get(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const settle = (result: Settled<V>) => (result.ok ? resolve(result.value) : reject(result.error));
      const waiters = this.waiting.get(key);
      if (waiters) waiters.push(settle);
      else this.waiting.set(key, [settle]);
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.size > 0) {
      const batch = new Map<string, Array<(result: Settled<V>) => void>>();
      for (const [key, waiters] of this.waiting) {
        batch.set(key, waiters);
        this.waiting.delete(key);
        if (batch.size >= this.maxBatch) break;
      }
      let found: Map<string, V> | undefined;
      let failure: unknown;
      try {
        found = await this.load([...batch.keys()]);
      } catch (error) {
        failure = error;
      }
      for (const [key, waiters] of batch) {
        const result: Settled<V> = found ? { ok: true, value: found.get(key) } : { ok: false, error: failure };
        for (const settle of waiters) settle(result);
      }
      // Held even when nothing waits yet: PGlite runs a query synchronously, so a flood's keys
      // arrive between queries, and only a pause gathers them into one.
      if (found?.size === 0) await new Promise((resolve) => setTimeout(resolve, this.missGapMs));
    }
    this.running = false;
  }
}

type Settled<V> = { ok: true; value: V | undefined } | { ok: false; error: unknown };

/** One lookup per owner (a process's caches) and name, made on first use. */
export function batchedLookupOf<V>(
  owner: object,
  name: string,
  load: (keys: string[]) => Promise<Map<string, V>>,
): BatchedLookup<V> {
  let byName = lookups.get(owner);
  if (!byName) {
    byName = new Map();
    lookups.set(owner, byName);
  }
  let lookup = byName.get(name) as BatchedLookup<V> | undefined;
  if (!lookup) {
    lookup = new BatchedLookup(load);
    byName.set(name, lookup);
  }
  return lookup;
}

const lookups = new WeakMap<object, Map<string, unknown>>();
