import { adminTokens, consoleSessions, type Db, newId } from '@atrium/db';
import { asc, eq, inArray, lte, ne } from 'drizzle-orm';
import { purgeExpired } from '../common/store.ts';
import { directoriesWithTokenHashes } from '../directories/store.ts';
import { environmentInfoColumns, joinedEnvironment } from '../environments/store.ts';

/**
 * The directories whose SCIM token has one of these SHA-256 hashes, with their environments (one
 * probe of the unique `token_hash` index each): a SCIM caller's principal.
 */
export function directoriesByTokenHash(db: Db, tokenHashes: string[]) {
  const d = directoriesWithTokenHashes(db, tokenHashes);
  return db
    .select({
      tokenHash: d.tokenHash,
      directoryId: d.directoryId,
      organizationId: d.organizationId,
      state: d.state,
      ...environmentInfoColumns,
    })
    .from(d)
    .innerJoin(...joinedEnvironment(d.environmentId));
}

/** The admin tokens among these hashes, by id. */
export function adminTokensByHash(db: Db, tokenHashes: string[]) {
  return db
    .select({ id: adminTokens.id, tokenHash: adminTokens.tokenHash })
    .from(adminTokens)
    .where(inArray(adminTokens.tokenHash, tokenHashes));
}

/** Stores an admin token's hash; a hash already stored is left as it is. Returns the new row, if any. */
export async function insertAdminToken(db: Db, tokenHash: string) {
  const [row] = await db
    .insert(adminTokens)
    .values({ id: newId('adminToken'), tokenHash })
    .onConflictDoNothing()
    .returning({ id: adminTokens.id, createdAt: adminTokens.createdAt });
  return row;
}

/** Makes the token with this hash the only admin token; returns how many others it deleted. */
export function keepOnlyAdminToken(db: Db, tokenHash: string): Promise<number> {
  return db.transaction(async (tx) => {
    await insertAdminToken(tx, tokenHash);
    const deleted = await tx
      .delete(adminTokens)
      .where(ne(adminTokens.tokenHash, tokenHash))
      .returning({ id: adminTokens.id });
    return deleted.length;
  });
}

export async function hasAdminToken(db: Db): Promise<boolean> {
  const rows = await db.select({ id: adminTokens.id }).from(adminTokens).limit(1);
  return rows.length > 0;
}

/** Every admin token by id, oldest first. */
export function allAdminTokens(db: Db) {
  return db
    .select({ id: adminTokens.id, createdAt: adminTokens.createdAt })
    .from(adminTokens)
    .orderBy(asc(adminTokens.id));
}

/** Deletes an admin token; true when it existed. */
export async function deleteAdminToken(db: Db, id: string): Promise<boolean> {
  const deleted = await db.delete(adminTokens).where(eq(adminTokens.id, id)).returning({ id: adminTokens.id });
  return deleted.length > 0;
}

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

/** Deletes at most `batchSize` console sessions expired before `cutoff` (the retention sweep, common/store.ts `purgeExpired`); how many went. */
export function purgeExpiredConsoleSessions(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeExpired(db, consoleSessions, cutoff, batchSize);
}
