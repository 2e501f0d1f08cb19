import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * `column = 'value'` with the value written into the statement instead of bound as a
 * parameter. Every statement runs prepared with a generic plan (see `openPostgres`), and a
 * generic plan can use a partial index (`… where status = 'pending'`) only when the query's own
 * condition is that same literal: with `status = $1` the planner cannot prove the index's
 * predicate and falls back to another index or a scan of the whole table. Use it for the
 * conditions that select a partial index; the values are the schema's own constants.
 */
export function equalsLiteral(column: AnyPgColumn, value: string): SQL {
  return sql`${column} = ${sql.raw(`'${value.replaceAll("'", "''")}'`)}`;
}
