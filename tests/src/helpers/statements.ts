import type { Db } from '@atrium/db';

/**
 * The statements `run` sends through `db`, by their text: on PGlite every one (a transaction as
 * `BEGIN` and its statements); on PostgreSQL those of the pipelined statement connections
 * (postgres.js's `debug` hook), not a transaction's, which runs on the transaction pool. Nothing
 * else may use `db` meanwhile (the test worker's database has no background work).
 */
export async function statementsOf<T>(db: Db, run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const client = (db as unknown as { $client: Record<string, unknown> }).$client;
  const restore: Array<() => void> = [];
  if (typeof client.unsafe === 'function') {
    const options = client.options as { debug?: unknown };
    const before = options.debug;
    options.debug = (_connection: number, text: string) => statements.push(text);
    restore.push(() => {
      options.debug = before;
    });
  } else {
    // A transaction's own client (PGlite's `Transaction`) has `query` and `exec` too.
    const counted = (target: Record<string, unknown>) => {
      for (const name of ['query', 'exec'] as const) {
        const original = target[name] as (...args: unknown[]) => unknown;
        target[name] = (...args: unknown[]) => {
          statements.push(String(args[0]));
          return original.apply(target, args);
        };
        restore.push(() => {
          target[name] = original;
        });
      }
    };
    counted(client);
    const transaction = client.transaction as (fn: (tx: Record<string, unknown>) => unknown) => unknown;
    client.transaction = (fn: (tx: Record<string, unknown>) => unknown) => {
      statements.push('BEGIN');
      return transaction.call(client, (tx) => {
        counted(tx);
        return fn(tx);
      });
    };
    restore.push(() => {
      client.transaction = transaction;
    });
  }
  try {
    const result = await run();
    return { result, statements };
  } finally {
    for (const undo of restore) undo();
  }
}
