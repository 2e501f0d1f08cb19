import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';

/** How a worker's claim shares a round between environments. */
export interface FairTake {
  /** At most this many rows of one environment per round. */
  perEnvironment: number;
  /** The environment the previous round ended on (`''` to start at the first). */
  cursor?: string;
  /** Only these environments (tests; a deployment leaves it unset). */
  environments?: string[];
}

/** Above every environment id (ids are `env_` + base32 and compare bytewise, `COLLATE "C"`). */
export const LAST_ENVIRONMENT = '~';

/**
 * A `WITH RECURSIVE` entry `envs(environment_id)`: the environments in (`after`, `upto`] that
 * have rows of `table` matching `where`, in id order, found by a skip scan (one probe of an index
 * led by `environment_id` per environment, however many rows each has). Workers join it
 * LATERAL to take at most k rows of each environment, so one environment's backlog cannot fill
 * a round; the last entry is a NULL that ends the recursion.
 */
export function environmentsWith(
  table: PgTable,
  environmentId: AnyPgColumn,
  where: SQL,
  after: string,
  upto: string,
): SQL {
  const next = (lower: SQL) =>
    sql`select ${environmentId} from ${table}
      where ${where} and ${environmentId} > ${lower} and ${environmentId} <= ${upto}
      order by ${environmentId} limit 1`;
  return sql`envs(environment_id) as (
      (${next(sql`${after}`)})
      union all
      select (${next(sql`envs.environment_id`)}) from envs where envs.environment_id is not null
    )`;
}

/**
 * Runs a round-robin claim from the environment after `cursor`, wrapping around to the first
 * environments when fewer than `limit` rows came back. Returns the rows and the cursor for the
 * next round: the last environment served when the round was full, else the start.
 */
export async function claimRoundRobin<T extends { environmentId: string }>(
  cursor: string,
  limit: number,
  claim: (after: string, upto: string, limit: number) => Promise<T[]>,
): Promise<{ rows: T[]; cursor: string }> {
  const lastOf = (rows: T[]) => rows.reduce((max, row) => (row.environmentId > max ? row.environmentId : max), '');
  const first = await claim(cursor, LAST_ENVIRONMENT, limit);
  if (first.length >= limit) return { rows: first, cursor: lastOf(first) };
  if (cursor === '') return { rows: first, cursor: '' };
  const second = await claim('', cursor, limit - first.length);
  return { rows: [...first, ...second], cursor: first.length + second.length >= limit ? lastOf(second) : '' };
}

/**
 * Orders claimed rows round-robin by environment (each environment's first row, then each
 * one's second, …), keeping each environment's own order, so work started in this order gives
 * every environment a slot before any gets a second.
 */
export function interleaveByEnvironment<T extends { environmentId: string }>(rows: T[]): T[] {
  const rank = new Map<string, number>();
  const ranked = rows.map((row, index) => {
    const n = rank.get(row.environmentId) ?? 0;
    rank.set(row.environmentId, n + 1);
    return { row, n, index };
  });
  return ranked.sort((a, b) => a.n - b.n || a.index - b.index).map((r) => r.row);
}
