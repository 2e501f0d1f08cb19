import { eq, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type Db, rawRows } from './client.ts';
import { environments } from './schema/index.ts';

/** How many rows of `table` match `where`, counting at most `limit` of them. */
export async function countUpTo(db: Db, table: PgTable, where: SQL | undefined, limit: number): Promise<number> {
  const [row] = await rawRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from (select 1 from ${table} where ${where} limit ${limit}) as counted`,
  );
  return row?.n ?? 0;
}

/**
 * Locks the environment's row until the transaction ends (NO KEY UPDATE: inserts elsewhere, whose
 * foreign keys take KEY SHARE on it, are not blocked). Serialises creates counted per environment.
 */
export async function lockEnvironment(tx: Db, environmentId: string): Promise<void> {
  await tx
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.id, environmentId))
    .for('no key update');
}
