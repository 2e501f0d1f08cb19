import { type DbHandle, openDb } from '@atrium/db';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, inject, it } from 'vitest';

/**
 * On PostgreSQL, single statements share a few pipelined connections and transactions run on the
 * others (db/src/client.ts, `openPostgres`): a statement never waits for a transaction to end,
 * and a transaction never queues behind statements.
 */
const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('connection pools (PostgreSQL only)', () => {
  const handles: DbHandle[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.close()));
  });

  async function open(poolSize: number, statementConnections?: number): Promise<DbHandle> {
    const handle = await openDb({ databaseUrl: databaseUrl as string, poolSize, statementConnections });
    handles.push(handle);
    return handle;
  }

  async function backendPid(run: (q: ReturnType<typeof sql>) => Promise<unknown>): Promise<number> {
    const rows = (await run(sql`select pg_backend_pid() as pid`)) as { pid: number }[];
    return Number(rows[0]?.pid);
  }

  it('runs concurrent statements on the statement connections only, and transactions on the others', async () => {
    const { db } = await open(10);
    const statementPids = new Set(
      await Promise.all(Array.from({ length: 40 }, () => backendPid((q) => db.execute(q)))),
    );
    expect(statementPids.size).toBeGreaterThanOrEqual(1);
    expect(statementPids.size).toBeLessThanOrEqual(2);

    // Five transactions at once, each holding its connection until all five have begun.
    let begun = 0;
    let release!: () => void;
    const allBegun = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transactionPids = await Promise.all(
      Array.from({ length: 5 }, () =>
        db.transaction(async (tx) => {
          const pid = await backendPid((q) => tx.execute(q));
          if (++begun === 5) release();
          await allBegun;
          return pid;
        }),
      ),
    );
    expect(new Set(transactionPids).size).toBe(5);
    for (const pid of transactionPids) expect(statementPids.has(pid)).toBe(false);
  });

  it('answers a statement while every transaction connection is held', async () => {
    // One connection each: with a single shared pool this statement would wait for the
    // transaction, which waits for the statement.
    const { db } = await open(2, 1);
    const answered = await db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      const rows = (await db.execute(sql`select 'outside' as v`)) as unknown as { v: string }[];
      return rows[0]?.v;
    });
    expect(answered).toBe('outside');
  });

  it('keeps at least one connection for each pool, whatever the sizes asked', async () => {
    const { db } = await open(1, 5);
    const outside = await backendPid((q) => db.execute(q));
    const inside = await db.transaction((tx) => backendPid((q) => tx.execute(q)));
    expect(inside).not.toBe(outside);
  });
});
