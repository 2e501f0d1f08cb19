import { type Db, sessions } from '@atrium/db';
import { lt, sql } from 'drizzle-orm';

/**
 * Deletes up to `batchSize` sessions expired before `cutoff`, revoked ones included (a revoked
 * session keeps its `expires_at`, so it goes 7 days after it would have expired); how many went. As the events purge:
 * ids as an array (primary-key lookups under a generic plan), in a transaction (its own connection).
 */
export async function purgeSessionsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const expired = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(lt(sessions.expiresAt, cutoff))
    .orderBy(sessions.expiresAt)
    .limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx.delete(sessions).where(sql`${sessions.id} = any(array(${expired}))`).returning({ id: sessions.id }),
  );
  return deleted.length;
}
