import type { Db } from './client.ts';

/** How `coalesced` sends its items: one alone, or several as one statement. */
export interface CoalescedStatements<I, R> {
  /** The statement of one item (a lone arrival, and each item of a batch that failed). */
  one(db: Db, item: I): Promise<R>;
  /** One statement for several items: each item's result, in the items' order. */
  many(db: Db, items: I[]): Promise<R[]>;
  /** At most this many items per statement (default 100). */
  max?: number;
  /**
   * Items of one key go together, each key its own queue (default: one queue per client). A batch
   * that runs several statements in one transaction keys by what they share (a directory).
   */
  key?(item: I): string;
}

interface Waiting<I, R> {
  db: Db;
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit, per database client (and `key`): an item arriving while none is in flight is
 * sent at once (no added latency alone); arrivals during a statement wait, and go together as one
 * statement (`many`, at most `max`) when it returns. A "statement" may be a transaction of several
 * (`directories/sync.ts`: concurrent SCIM creates of one directory as one transaction). Each caller's promise
 * settles with its own item's result once the statement that carried it has finished. A batch
 * that fails is sent again item by item (`one`), so each caller sees its own item's outcome only.
 *
 * Handles over one client share a queue (an idempotent request's handle is the pool's handle with
 * its own `transaction`, idempotency/service.ts `markingDb`), and a batch runs on the handle of its
 * first item: `one` and `many` may use only what such handles share, their client's statements.
 * A transaction is a queue of its own.
 */
export function coalesced<I, R>(statements: CoalescedStatements<I, R>): (db: Db, item: I) => Promise<R> {
  const lanes = new WeakMap<object, Map<string, Lane<I, R>>>();
  return (db, item) => {
    const client = clientOf(db);
    let keyed = lanes.get(client);
    if (keyed === undefined) {
      keyed = new Map();
      lanes.set(client, keyed);
    }
    const key = statements.key?.(item) ?? '';
    let lane = keyed.get(key);
    if (lane === undefined) {
      // An idle lane goes (a key per directory would otherwise keep one for each ever written).
      const own = keyed;
      lane = new Lane(statements, () => own.delete(key));
      keyed.set(key, lane);
    }
    return lane.submit(db, item);
  };
}

/** The driver's client under a handle (a transaction has none of its own: the handle stands for it). */
function clientOf(db: Db): object {
  const client = (db as unknown as { $client?: unknown }).$client;
  return typeof client === 'object' || typeof client === 'function' ? (client as object) : db;
}

/** One client's queue: at most one statement of it in flight. */
class Lane<I, R> {
  private busy = false;
  private readonly waiting: Waiting<I, R>[] = [];
  private readonly max: number;

  constructor(
    private readonly statements: CoalescedStatements<I, R>,
    private readonly idle: () => void,
  ) {
    this.max = Math.max(1, statements.max ?? 100);
  }

  submit(db: Db, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ db, item, resolve, reject });
      if (!this.busy) this.next();
    });
  }

  /** Sends what waits (up to `max`), or frees the lane when nothing does. */
  private next(): void {
    const batch = this.waiting.splice(0, this.max);
    this.busy = batch.length > 0;
    if (this.busy) void this.send(batch).then(() => this.next());
    else this.idle();
  }

  private async send(batch: Waiting<I, R>[]): Promise<void> {
    const first = batch[0] as Waiting<I, R>;
    if (batch.length === 1) return this.alone(first);
    let results: R[];
    try {
      results = await this.statements.many(
        first.db,
        batch.map((w) => w.item),
      );
      if (results.length !== batch.length) throw new Error(`coalesced: ${results.length} results for ${batch.length}`);
    } catch {
      // Each item again on its own, without holding the lane: one bad item fails only its caller.
      for (const waiting of batch) void this.alone(waiting);
      return;
    }
    for (let i = 0; i < batch.length; i++) (batch[i] as Waiting<I, R>).resolve(results[i] as R);
  }

  private async alone(waiting: Waiting<I, R>): Promise<void> {
    try {
      waiting.resolve(await this.statements.one(waiting.db, waiting.item));
    } catch (error) {
      waiting.reject(error);
    }
  }
}
