/**
 * Atrium keeps the planner's statistics fresh itself where nothing else does: PGlite has no
 * autovacuum, and a PostgreSQL may run with `autovacuum = off`. Without them a table that grew
 * from a few rows to thousands is still planned as a few rows (the `domains` filter fell to
 * 0.2x of a first page until a manual ANALYZE, bench/README.md "Floors (issue #35)").
 */
import { type SQL, sql } from 'drizzle-orm';

/**
 * Runs one statement and answers its rows (`(query) => rawRows(db, query)`). Taken as a function
 * so that this module needs nothing of client.ts, which calls it after migrations.
 */
export type RunSql = <T>(query: SQL) => Promise<T[]>;
type Driver = 'postgres' | 'pglite';

/** Whether this database needs Atrium to analyze its tables: PGlite always, PostgreSQL with autovacuum off. */
export async function maintainsStatistics(run: RunSql, driver: Driver): Promise<boolean> {
  if (driver === 'pglite') return true;
  const [row] = await run<{ autovacuum: string }>(sql`show autovacuum`);
  return row?.autovacuum !== 'on';
}

/** Autovacuum's default analyze threshold: 50 rows plus 10 % of the table. */
const BASE_THRESHOLD = 50;
const SCALE_FACTOR = 0.1;

/**
 * The tables of the current schema whose statistics are stale, by either of two signs:
 * rows changed since the last analyze (`n_mod_since_analyze`, which a backend reports when it
 * goes idle, within seconds) or the table's size now against the size its last analyze saw
 * (`relpages`; the rows that many pages hold at the analyzed density), which counts at once.
 * Past autovacuum's own threshold in either; a table with rows never analyzed is stale.
 */
export async function staleTables(run: RunSql, driver: Driver): Promise<string[]> {
  // PGlite's one backend never goes idle between statements: ask it to report its counts now
  // (PostgreSQL's backends report theirs when idle).
  if (driver === 'pglite') await run(sql`select pg_stat_force_next_flush()`);
  const rows = await run<{ table: string }>(
    sql`select c.relname as "table" from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_stat_user_tables s on s.relid = c.oid
      cross join lateral (select pg_relation_size(c.oid) / current_setting('block_size')::int as pages) now
      where c.relkind = 'r' and n.nspname = current_schema()
        and (
          (c.reltuples < 0 and now.pages > 0)
          or (c.relpages = 0 and now.pages > 0)
          or coalesce(s.n_mod_since_analyze, 0) > ${BASE_THRESHOLD} + ${SCALE_FACTOR} * greatest(c.reltuples, 0)
          or (c.relpages > 0 and abs(now.pages - c.relpages) * greatest(c.reltuples, 0) / c.relpages
                > ${BASE_THRESHOLD} + ${SCALE_FACTOR} * greatest(c.reltuples, 0))
        )
      order by c.relname`,
  );
  return rows.map((row) => row.table);
}

async function tablesOfSchema(run: RunSql): Promise<string[]> {
  const rows = await run<{ table: string }>(
    sql`select c.relname as "table" from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname = current_schema() order by c.relname`,
  );
  return rows.map((row) => row.table);
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Vacuums and analyzes the stale tables (all tables of the schema with `all`, after migrations that may
 * have backfilled) and returns their names; nothing where autovacuum runs. A table another
 * session is analyzing is skipped (`SKIP_LOCKED`): that one brings it up to date.
 */
export async function refreshStatistics(
  run: RunSql,
  driver: Driver,
  options: { all?: boolean } = {},
): Promise<string[]> {
  if (!(await maintainsStatistics(run, driver))) return [];
  const tables = options.all ? await tablesOfSchema(run) : await staleTables(run, driver);
  // VACUUM as well as ANALYZE: with no autovacuum nothing else sets the visibility map, and
  // without it an index-only scan visits the heap (SCIM's deep offset pages, docs/scim.md).
  for (const table of tables) await run(sql.raw(`vacuum (analyze, skip_locked) ${quoted(table)}`));
  return tables;
}
