import { consoleSessions, type Db } from '@atrium/db';
import { eq, inArray, lte } from 'drizzle-orm';

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;

export async function insertConsoleSession(db: Db, row: typeof consoleSessions.$inferInsert): Promise<void> {
  await db.insert(consoleSessions).values(row);
}

/** The sessions among these secret hashes, expired ones included (each caller judges expiry by its own clock). */
export function consoleSessionsByHash(db: Db, tokenHashes: string[]) {
  return db
    .select({
      tokenHash: consoleSessions.tokenHash,
      id: consoleSessions.id,
      adminTokenId: consoleSessions.adminTokenId,
      expiresAt: consoleSessions.expiresAt,
    })
    .from(consoleSessions)
    .where(inArray(consoleSessions.tokenHash, tokenHashes));
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
