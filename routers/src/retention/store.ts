import type { Db } from '@atrium/db';
import { purgeExpiredConsoleSessions } from '../auth/store.ts';
import { purgeExpiredPortalLinks, purgeExpiredPortalSessions } from '../portal/store.ts';
import { purgeExpiredChallenges } from '../session-challenges/store.ts';

/**
 * The short-lived tables whose rows are dead once past `expires_at`: admin-portal links and
 * sessions, console sign-ins, and session challenges (verification codes, elevated access,
 * counted wrong passwords), each purged by its owner store. The retention sweep purges them
 * (retention/service.ts).
 */
const EXPIRING = {
  portal_links: purgeExpiredPortalLinks,
  portal_sessions: purgeExpiredPortalSessions,
  console_sessions: purgeExpiredConsoleSessions,
  session_challenges: purgeExpiredChallenges,
};
export type ExpiringTable = keyof typeof EXPIRING;
export const EXPIRING_TABLES = Object.keys(EXPIRING) as ExpiringTable[];

/** Deletes at most `batchSize` rows of `name` that expired before `cutoff`; how many went. */
export function purgeExpiredBefore(db: Db, name: ExpiringTable, cutoff: Date, batchSize: number): Promise<number> {
  return EXPIRING[name](db, cutoff, batchSize);
}
