import { rawRows, renderedOnce } from '@atrium/db';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';

/**
 * `renderedOnce` sends a statement rendered at its first run with each run's values, on the
 * handle's own client (postgres.js or PGlite), and renders it with its values through Drizzle
 * where there is no such client (a transaction): the same rows either way.
 */
describe('renderedOnce', () => {
  const statement = renderedOnce(['name', 'count', 'ids', 'missing'], (v) => {
    const ids = Array.isArray(v.ids) ? sql.param(v.ids) : v.ids;
    return sql`select ${v.name}::text as name, ${v.count}::int + 1 as next, array_length(${ids}::text[], 1) as ids, ${v.missing}::text is null as missing, txid_current_if_assigned()::text as xid`;
  });

  it('fills every run with its own values, on the handle and in a transaction', async () => {
    const { handle } = await getWorld();
    const first = { name: "o'brien", count: 1, ids: ['a', 'b', 'c'], missing: null };
    const second = { name: 'second', count: 41, ids: ['x'], missing: 'here' };
    expect(await statement(handle.db, first)).toEqual([{ name: "o'brien", next: 2, ids: 3, missing: true, xid: null }]);
    expect(await statement(handle.db, second)).toEqual([
      { name: 'second', next: 42, ids: 1, missing: false, xid: null },
    ]);
    // Inside a transaction it runs in that transaction (it sees the transaction's own id).
    const [xid, rows] = await handle.db.transaction(async (tx) => {
      const [own] = await rawRows<{ xid: string }>(tx, sql`select txid_current()::text as xid`);
      return [own?.xid, await statement(tx, second)] as const;
    });
    expect(rows).toEqual([{ name: 'second', next: 42, ids: 1, missing: false, xid }]);
    expect(xid).toMatch(/^\d+$/);
  });
});
