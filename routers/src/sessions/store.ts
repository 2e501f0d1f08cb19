import { type Db, type PageParams, paginate, perHandle, sessions } from '@atrium/db';
import { and, desc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import { loadScoped, purgeExpired, type RowLock } from '../common/store.ts';
import { activeMembershipExists } from '../organization-memberships/store.ts';

export type SessionRow = typeof sessions.$inferSelect;
export type NewSession = typeof sessions.$inferInsert;

export async function insertSession(tx: Db, values: NewSession): Promise<SessionRow> {
  const [row] = await tx.insert(sessions).values(values).returning();
  return row as SessionRow;
}

/** The session of the environment, or 404; `lock` holds it in the caller's transaction. */
export function findSession(db: Db, environmentId: string, id: string, lock?: RowLock): Promise<SessionRow> {
  return loadScoped(db, sessions, 'session', environmentId, id, lock);
}

/** One page of a user's sessions (keyset on the `(environment_id, user_id, id)` index). */
export function pageOfUserSessions(db: Db, environmentId: string, userId: string, params: PageParams) {
  return paginate(
    params,
    sessions.id,
    (q) =>
      db
        .select()
        .from(sessions)
        .where(and(eq(sessions.environmentId, environmentId), eq(sessions.userId, userId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The user's live sessions at `now` (not revoked, not expired), newest first; at most `limit` of them. */
export function liveSessionsOfUser(
  db: Db,
  environmentId: string,
  userId: string,
  now: Date,
  limit?: number,
): Promise<SessionRow[]> {
  const query = db
    .select()
    .from(sessions)
    .where(
      and(
        eq(sessions.environmentId, environmentId),
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
      ),
    )
    .orderBy(desc(sessions.id));
  return limit === undefined ? query : query.limit(limit);
}

/** Which of a user's live sessions to end: those of one organization, or all but one. */
export interface LiveSessionsFilter {
  userId: string;
  organizationId?: string | undefined;
  exceptId?: string | undefined;
}

/** Marks the user's live sessions that `filter` names revoked at `at`, in one statement, and answers them. */
export function revokeLiveSessions(
  tx: Db,
  environmentId: string,
  filter: LiveSessionsFilter,
  at: Date,
): Promise<SessionRow[]> {
  return tx
    .update(sessions)
    .set({ revokedAt: at })
    .where(
      and(
        eq(sessions.environmentId, environmentId),
        eq(sessions.userId, filter.userId),
        filter.organizationId === undefined ? undefined : eq(sessions.organizationId, filter.organizationId),
        filter.exceptId === undefined ? undefined : ne(sessions.id, filter.exceptId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, at),
      ),
    )
    .returning();
}

/** Marks the live sessions of these users in one organization revoked at `at`, in one statement, and answers them. */
export function revokeLiveSessionsOfUsers(
  tx: Db,
  environmentId: string,
  organizationId: string,
  userIds: string[],
  at: Date,
): Promise<SessionRow[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return tx
    .update(sessions)
    .set({ revokedAt: at })
    .where(
      and(
        eq(sessions.environmentId, environmentId),
        inArray(sessions.userId, userIds),
        eq(sessions.organizationId, organizationId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, at),
      ),
    )
    .returning();
}

/**
 * Records a use of the session at `at`: its last activity, and the device (address, User-Agent)
 * where none is recorded yet, so the first device to use it stays its device.
 */
export async function touchSession(
  db: Db,
  id: string,
  device: { ipAddress: string | null; userAgent: string | null },
  at: Date,
): Promise<void> {
  await db
    .update(sessions)
    .set({
      lastActivityAt: at,
      ipAddress: sql`coalesce(${sessions.ipAddress}, ${device.ipAddress})`,
      userAgent: sql`coalesce(${sessions.userAgent}, ${device.userAgent})`,
    })
    .where(eq(sessions.id, id));
}

export async function markSessionRevoked(tx: Db, id: string, at: Date): Promise<SessionRow> {
  const [row] = await tx.update(sessions).set({ revokedAt: at }).where(eq(sessions.id, id)).returning();
  return row as SessionRow;
}

/**
 * The session's live read, prepared once per database handle (`perHandle`): it runs on every
 * client-surface request, where Drizzle rendering it cost more CPU than the read itself.
 */
const liveSessionRead = perHandle((db: Db) =>
  db
    .select({ session: sessions })
    .from(sessions)
    .where(
      and(
        eq(sessions.id, sql.placeholder('id')),
        activeMembershipExists(sessions.organizationId, sessions.userId),
        eq(sessions.environmentId, sql.placeholder('env')),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql.placeholder('now')),
      ),
    )
    .limit(1)
    .prepare('sessions_live'),
);

/**
 * The session if it is live at `now` (in the environment, not revoked, not expired) and its
 * user still holds an active membership of its organization, else undefined. One primary-key
 * read joined to the membership's unique index, never cached: a revocation counts from its commit.
 */
export async function liveSession(
  db: Db,
  environmentId: string,
  id: string,
  now: Date,
): Promise<SessionRow | undefined> {
  // A placeholder skips the column's encoder: the instant goes as text, which both drivers bind.
  const [row] = await liveSessionRead(db).execute({ id, env: environmentId, now: now.toISOString() });
  return row?.session;
}

/**
 * Deletes up to `batchSize` sessions expired before `cutoff`, revoked ones included (a revoked
 * session keeps its `expires_at`, so it goes 7 days after it would have expired); how many went.
 */
export function purgeSessionsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeExpired(db, sessions, cutoff, batchSize);
}
