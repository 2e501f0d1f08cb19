// Every query of session challenges (codes, elevated access): the account widgets' (client-api/account)
// and the retention sweep's.
import { type Db, type SessionChallengePurpose, sessionChallenges } from '@atrium/db';
import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { purgeExpired } from '../common/store.ts';

export type SessionChallengeRow = typeof sessionChallenges.$inferSelect;

/**
 * Whose challenges: an operation-20 token's stored session, or, for a widget token (no sign-in,
 * no session), its user's challenges kept outside any session.
 */
export interface ChallengeHolder {
  userId: string;
  sessionId: string | null;
}

const heldBy = (holder: ChallengeHolder) =>
  holder.sessionId === null
    ? and(eq(sessionChallenges.userId, holder.userId), isNull(sessionChallenges.sessionId))
    : eq(sessionChallenges.sessionId, holder.sessionId);

export async function insertChallenge(db: Db, row: typeof sessionChallenges.$inferInsert): Promise<void> {
  await db.insert(sessionChallenges).values(row);
}

export async function deleteChallenge(db: Db, id: string): Promise<void> {
  await db.delete(sessionChallenges).where(eq(sessionChallenges.id, id));
}

/**
 * The holder's challenge of this purpose to check a code against, locked (two tries at once
 * count twice): the one with `id`, else the newest. In any state: the caller tells a used,
 * expired or worn-out one apart.
 */
export async function challengeToCheck(
  db: Db,
  holder: ChallengeHolder,
  purpose: SessionChallengePurpose,
  id?: string,
): Promise<SessionChallengeRow | undefined> {
  const [row] = await db
    .select()
    .from(sessionChallenges)
    .where(
      and(
        heldBy(holder),
        eq(sessionChallenges.purpose, purpose),
        id === undefined ? undefined : eq(sessionChallenges.id, id),
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

/** Ends every open challenge of these purposes of the holder (a newer code replaces the older ones). */
export async function consumeOpenChallenges(
  db: Db,
  holder: ChallengeHolder,
  purposes: SessionChallengePurpose[],
  now: Date,
): Promise<void> {
  await db
    .update(sessionChallenges)
    .set({ consumedAt: now })
    .where(and(heldBy(holder), inArray(sessionChallenges.purpose, purposes), isNull(sessionChallenges.consumedAt)));
}

/** The holder's elevated access under this token hash, live or not (its expiry says which). */
export async function elevatedAccessOf(
  db: Db,
  holder: ChallengeHolder,
  secretHash: string,
): Promise<{ expiresAt: Date } | undefined> {
  const [row] = await db
    .select({ expiresAt: sessionChallenges.expiresAt })
    .from(sessionChallenges)
    .where(
      and(
        heldBy(holder),
        eq(sessionChallenges.purpose, 'elevated_access'),
        eq(sessionChallenges.secretHash, secretHash),
      ),
    )
    .limit(1);
  return row;
}

/** Deletes at most `batchSize` session challenges expired before `cutoff` (the retention sweep, common/store.ts `purgeExpired`); how many went. */
export function purgeExpiredChallenges(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeExpired(db, sessionChallenges, cutoff, batchSize);
}
