import { type Db, type SessionChallengePurpose, sessionChallenges } from '@atrium/db';
import { and, count, desc, eq, gt, gte, inArray, isNull, sql } from 'drizzle-orm';

export type SessionChallengeRow = typeof sessionChallenges.$inferSelect;

export async function insertChallenge(db: Db, row: typeof sessionChallenges.$inferInsert): Promise<void> {
  await db.insert(sessionChallenges).values(row);
}

export async function deleteChallenge(db: Db, id: string): Promise<void> {
  await db.delete(sessionChallenges).where(eq(sessionChallenges.id, id));
}

/** How many codes the session has asked for since `since` (of either purpose). */
export async function codesSentSince(db: Db, sessionId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(sessionChallenges)
    .where(
      and(
        eq(sessionChallenges.sessionId, sessionId),
        inArray(sessionChallenges.purpose, ['identity', 'email_change']),
        gte(sessionChallenges.createdAt, since),
      ),
    );
  return row?.n ?? 0;
}

/**
 * The session's open challenge of this purpose, locked for the check (two tries at once count
 * twice): the one with `id`, else the newest. Consumed and expired ones are not open.
 */
export async function openChallenge(
  db: Db,
  sessionId: string,
  purpose: SessionChallengePurpose,
  now: Date,
  id?: string,
): Promise<SessionChallengeRow | undefined> {
  const [row] = await db
    .select()
    .from(sessionChallenges)
    .where(
      and(
        eq(sessionChallenges.sessionId, sessionId),
        eq(sessionChallenges.purpose, purpose),
        id === undefined ? undefined : eq(sessionChallenges.id, id),
        isNull(sessionChallenges.consumedAt),
        gt(sessionChallenges.expiresAt, now),
      ),
    )
    .orderBy(desc(sessionChallenges.id))
    .limit(1)
    .for('update');
  return row;
}

/** One more wrong code on the challenge; its attempts after it. */
export async function countWrongCode(db: Db, id: string): Promise<number> {
  const [row] = await db
    .update(sessionChallenges)
    .set({ attempts: sql`${sessionChallenges.attempts} + 1` })
    .where(eq(sessionChallenges.id, id))
    .returning({ attempts: sessionChallenges.attempts });
  return row?.attempts ?? 0;
}

export async function consumeChallenge(db: Db, id: string, now: Date): Promise<void> {
  await db.update(sessionChallenges).set({ consumedAt: now }).where(eq(sessionChallenges.id, id));
}

/** Ends every open challenge of these purposes in the session (a newer code replaces the older ones). */
export async function consumeOpenChallenges(
  db: Db,
  sessionId: string,
  purposes: SessionChallengePurpose[],
  now: Date,
): Promise<void> {
  await db
    .update(sessionChallenges)
    .set({ consumedAt: now })
    .where(
      and(
        eq(sessionChallenges.sessionId, sessionId),
        inArray(sessionChallenges.purpose, purposes),
        isNull(sessionChallenges.consumedAt),
      ),
    );
}

/** Whether the session holds live elevated access under this token hash. */
export async function hasElevatedAccess(db: Db, sessionId: string, secretHash: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ id: sessionChallenges.id })
    .from(sessionChallenges)
    .where(
      and(
        eq(sessionChallenges.sessionId, sessionId),
        eq(sessionChallenges.purpose, 'elevated_access'),
        eq(sessionChallenges.secretHash, secretHash),
        isNull(sessionChallenges.consumedAt),
        gt(sessionChallenges.expiresAt, now),
      ),
    )
    .limit(1);
  return row !== undefined;
}
