import { consoleSessions, type Db } from '@atrium/db';
import { and, eq, gt, inArray, lte } from 'drizzle-orm';

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;

export async function insertConsoleSession(db: Db, row: typeof consoleSessions.$inferInsert): Promise<void> {
  await db.insert(consoleSessions).values(row);
}

/** The unexpired sessions among these secret hashes. */
export function liveConsoleSessions(db: Db, tokenHashes: string[], now: Date) {
  return db
    .select({
      tokenHash: consoleSessions.tokenHash,
      id: consoleSessions.id,
      adminTokenId: consoleSessions.adminTokenId,
      expiresAt: consoleSessions.expiresAt,
    })
    .from(consoleSessions)
    .where(and(inArray(consoleSessions.tokenHash, tokenHashes), gt(consoleSessions.expiresAt, now)));
}

/** Ends a session (sign-out); true when there was one. */
export async function deleteConsoleSession(db: Db, tokenHash: string): Promise<boolean> {
  const rows = await db
    .delete(consoleSessions)
    .where(eq(consoleSessions.tokenHash, tokenHash))
    .returning({ id: consoleSessions.id });
  return rows.length > 0;
}

/** Forgets expired sessions (run at each sign-in, so the table holds live sessions and few others). */
export async function deleteExpiredConsoleSessions(db: Db, now: Date): Promise<void> {
  await db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now));
}
