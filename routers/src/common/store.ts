import { type Db, perHandleAndKey } from '@atrium/db';
import { and, eq, getTableName, lt, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { type Entity, notFound } from '../kernel/errors.ts';

/** A table whose rows belong to one environment and are named by an `id`. */
export type ScopedTable = PgTable & { id: AnyPgColumn; environmentId: AnyPgColumn };

/** Row locks a lookup may take in the caller's transaction. */
export type RowLock = 'update' | 'no key update' | 'share' | 'key share';

/** The condition "this id, in this environment": the only way rows are named by id. */
export function scopedId(table: ScopedTable, environmentId: string, id: string): SQL {
  return and(eq(table.environmentId, environmentId), eq(table.id, id)) as SQL;
}

/** The row, or the contract's 404 for `entity` named by `id`. */
export function orNotFound<T>(row: T | undefined, entity: Entity, id: string): T {
  if (row === undefined) throw notFound(entity, id);
  return row;
}

/**
 * The one "load the row scoped to the environment or 404" lookup: the row of `table` with this
 * id in the environment, optionally locked in the caller's transaction.
 */
export async function loadScoped<T extends ScopedTable>(
  db: Db,
  table: T,
  entity: Entity,
  environmentId: string,
  id: string,
  lock?: RowLock,
): Promise<T['$inferSelect']> {
  const rows = lock
    ? await db
        .select()
        .from(table as PgTable)
        .where(scopedId(table, environmentId, id))
        .limit(1)
        .for(lock)
    : await scopedRead(db, table).execute({ env: environmentId, id });
  return orNotFound(rows[0] as T['$inferSelect'] | undefined, entity, id);
}

/**
 * The unlocked lookup of `table`, prepared once per database handle: it runs on most requests
 * (an organization's existence, a role's owner), where Drizzle rendering it cost more than the read.
 */
const scopedRead = perHandleAndKey((db: Db, table: ScopedTable) =>
  db
    .select()
    .from(table as PgTable)
    .where(and(eq(table.environmentId, sql.placeholder('env')), eq(table.id, sql.placeholder('id'))))
    .limit(1)
    .prepare(`${getTableName(table)}_scoped`),
);

/** A LIKE pattern matching `text` anywhere, its `%`, `_` and backslash taken literally (a search box's text). */
/** A column qualified by its table, for subqueries and JSON tuples that must name the outer row. */
export const qualified = (column: AnyPgColumn): SQL =>
  sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;

export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A table of short-lived rows: named by `id`, dead once past `expires_at`. */
export type ExpiringTable = PgTable & { id: AnyPgColumn; expiresAt: AnyPgColumn };

/**
 * Deletes at most `batchSize` rows of `table` whose `time` is before `cutoff`, oldest first; how
 * many went (a retention sweep's batch, each owner store applying it to its table). The ids as an
 * array, so the delete finds them by primary key (`id in (select …)` gets a generic plan that
 * hash-joins over the whole table); oldest first, so that a table with an index on `time`
 * (sessions, portal links, events) is read through it, never scanned
 * (tests/src/db/generic-plans.pg.test.ts), and one without (session_challenges, small, dying with
 * its session) sorts its old rows once per batch. A transaction, though one statement: on
 * PostgreSQL it then runs on a transaction connection, not queued ahead of the requests'
 * statements (openPostgres).
 */
export async function purgeOlderThan(
  db: Db,
  table: PgTable & { id: AnyPgColumn },
  time: AnyPgColumn,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  const old = db.select({ id: table.id }).from(table).where(lt(time, cutoff)).orderBy(time).limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx.delete(table).where(sql`${table.id} = any(array(${old}))`).returning({ id: table.id }),
  );
  return deleted.length;
}

/** `purgeOlderThan` of a short-lived table by its `expires_at`. */
export function purgeExpired(db: Db, table: ExpiringTable, cutoff: Date, batchSize: number): Promise<number> {
  return purgeOlderThan(db, table, table.expiresAt, cutoff, batchSize);
}
