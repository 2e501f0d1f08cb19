import { type DbHandle, newId, openDb, organizations, rawRows } from '@atrium/db';
import { statisticsCheck } from '@atrium/server';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDatabase } from '../helpers/scratch-database.ts';

/**
 * Atrium analyzes its own tables where nothing else does (db/src/statistics.ts): PGlite has no
 * autovacuum, and this suite's PostgreSQL runs with `autovacuum = off`. On a database of its
 * own (the check looks at every table), each step called directly: no waiting for a timer.
 */
const databaseUrl = inject('databaseUrl');
let handle: DbHandle;
let drop = async () => {};

beforeAll(async () => {
  if (databaseUrl) {
    const scratch = await scratchDatabase(databaseUrl, 'statistics');
    drop = scratch.drop;
    handle = await openDb({ databaseUrl: scratch.url, poolSize: 2 });
  } else {
    handle = await openDb({ dataDir: 'memory://' });
  }
  await handle.migrate();
}, 60_000);

afterAll(async () => {
  await handle?.close();
  await drop();
});

interface TableStatistics {
  reltuples: number;
  analyze_count: number;
}

async function statisticsOf(table: string): Promise<TableStatistics> {
  const [row] = await rawRows<TableStatistics>(
    handle.db,
    sql`select c.reltuples::float8 as reltuples, coalesce(s.analyze_count, 0)::int as analyze_count
      from pg_class c left join pg_stat_user_tables s on s.relid = c.oid
      where c.oid = to_regclass(${table})`,
  );
  if (!row) throw new Error(`no table ${table}`);
  return { reltuples: Number(row.reltuples), analyze_count: Number(row.analyze_count) };
}

describe('statistics kept by Atrium', () => {
  it('analyzes every table after migrations that applied something', async () => {
    const never = await rawRows<{ relname: string }>(
      handle.db,
      sql`select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind = 'r' and n.nspname = current_schema() and c.reltuples < 0`,
    );
    expect(never).toEqual([]);
  });

  it('analyzes a table after a bulk insert, and leaves it alone once fresh', async () => {
    const [env] = await rawRows<{ id: string }>(
      handle.db,
      sql`insert into environments (id, name, client_id) values (${newId('environment')}, 'statistics', ${newId('client')})
        returning id`,
    );
    const before = await statisticsOf('organizations');
    expect(before.reltuples).toBe(0);
    const rows = Array.from({ length: 3_000 }, (_, i) => ({
      id: newId('organization'),
      environmentId: env?.id as string,
      name: `Bulk ${i}`,
    }));
    for (let i = 0; i < rows.length; i += 1_000) await handle.db.insert(organizations).values(rows.slice(i, i + 1_000));

    expect(await statisticsCheck(handle)).toContain('organizations');
    const after = await statisticsOf('organizations');
    expect(after.reltuples).toBe(3_000);
    expect(after.analyze_count).toBeGreaterThan(before.analyze_count);

    // Fresh now: the next check reads the catalog and analyzes nothing it did not have to.
    expect(await statisticsCheck(handle)).not.toContain('organizations');
    expect((await statisticsOf('organizations')).analyze_count).toBe(after.analyze_count);
  }, 60_000);

  it('leaves a table that changed little alone', async () => {
    const before = await statisticsOf('organizations');
    const [env] = await rawRows<{ id: string }>(handle.db, sql`select id from environments limit 1`);
    await handle.db
      .insert(organizations)
      .values({ id: newId('organization'), environmentId: env?.id as string, name: 'One more' });
    expect(await statisticsCheck(handle)).not.toContain('organizations');
    expect((await statisticsOf('organizations')).analyze_count).toBe(before.analyze_count);
  });
});
