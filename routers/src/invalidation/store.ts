import type { Db } from '@atrium/db';
import { sql } from 'drizzle-orm';

/** The one channel every process LISTENs on. */
export const INVALIDATION_CHANNEL = 'atrium_invalidation';

/**
 * `NOTIFY` through `db`: inside a transaction it is delivered when (and only if) that commits,
 * so a listener never hears of a change it cannot yet read, nor of one that rolled back.
 */
export async function notifyInvalidation(db: Db, payload: string): Promise<void> {
  await db.execute(sql`select pg_notify(${INVALIDATION_CHANNEL}, ${payload})`);
}
