import { consoleSessions, type Db, portalLinks, portalSessions, sessionChallenges } from '@atrium/db';
import { lt, sql } from 'drizzle-orm';

/**
 * The short-lived tables whose rows are dead once past `expires_at`: admin-portal links and
 * sessions, console sign-ins, and session challenges (verification codes, elevated access,
 * counted wrong passwords). The retention sweep purges them (retention/service.ts).
 */
const EXPIRING = {
  portal_links: portalLinks,
  portal_sessions: portalSessions,
  console_sessions: consoleSessions,
  session_challenges: sessionChallenges,
};
export type ExpiringTable = keyof typeof EXPIRING;
export const EXPIRING_TABLES = Object.keys(EXPIRING) as ExpiringTable[];

/**
 * Deletes at most `batchSize` rows of `name` that expired before `cutoff`; how many went. As the
 * sessions purge: ids as an array (primary-key lookups), in a transaction (its own connection).
 * No order: a batch takes whichever expired rows come first, so a table without an index on
 * `expires_at` (session_challenges, small, dying with its session) is read once per batch.
 */
export async function purgeExpiredBefore(
  db: Db,
  name: ExpiringTable,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  const table = EXPIRING[name];
  const expired = db.select({ id: table.id }).from(table).where(lt(table.expiresAt, cutoff)).limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx.delete(table).where(sql`${table.id} = any(array(${expired}))`).returning({ id: table.id }),
  );
  return deleted.length;
}
