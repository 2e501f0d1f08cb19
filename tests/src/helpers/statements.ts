import type { Db } from '@atrium/db';

/**
 * The statements `run` sends through `db`, by their text: on PGlite every one (queries, `exec`,
 * a transaction counted as `BEGIN`); on PostgreSQL those of the pipelined statement connections
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
    for (const name of ['query', 'exec', 'transaction'] as const) {
      const original = client[name] as (...args: unknown[]) => unknown;
      client[name] = (...args: unknown[]) => {
        statements.push(name === 'transaction' ? 'BEGIN' : String(args[0]));
        return original.apply(client, args);
      };
      restore.push(() => {
        client[name] = original;
      });
    }
  }
  try {
    const result = await run();
    return { result, statements };
  } finally {
    for (const undo of restore) undo();
  }
}
