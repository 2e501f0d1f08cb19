import type { Db } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { recordEvent, recordEvents } from '../events/record.ts';
import type { RequestDevice } from '../kernel/context.ts';
import { notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { findUser } from '../users/store.ts';
import type { ListSessionsInput, Session } from './schemas.ts';
import {
  findSession,
  type LiveSessionsFilter,
  liveSessionsOfUser,
  markSessionRevoked,
  pageOfUserSessions,
  revokeLiveSessions,
  revokeLiveSessionsOfUsers,
  type SessionRow,
  touchSession,
} from './store.ts';

/** `revoked` once revoked, `expired` from `expires_at` on, else `active`. */
function statusOf(row: SessionRow, now: Date): Session['status'] {
  if (row.revokedAt) return 'revoked';
  return row.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** The single place that turns a session row into its wire shape (its status as of `now`). */
export function toSession(row: SessionRow, now: Date): Session {
  const status = statusOf(row, now);
  const endedAt = row.revokedAt ?? (status === 'expired' ? row.expiresAt : null);
  return {
    object: 'session',
    id: row.id,
    user_id: row.userId,
    organization_id: row.organizationId,
    ip_address: row.ipAddress,
    user_agent: row.userAgent,
    auth_method: 'external_auth',
    status,
    expires_at: iso(row.expiresAt),
    ended_at: endedAt ? iso(endedAt) : null,
    created_at: iso(row.createdAt),
    // A session changes when it is used (at most once a minute) and when it is revoked.
    updated_at: iso(row.revokedAt ?? row.lastActivityAt ?? row.createdAt),
  };
}

/** A session's last activity is recorded to this step, so a busy session costs one write a minute. */
export const SESSION_ACTIVITY_STEP_MS = 60_000;

/**
 * A live session was used from `device` at `now`: the first use records the device (the widgets
 * show it as the session's), and its last activity moves on when it is a step old. Otherwise
 * nothing is written, so the check on every client request stays a read.
 */
export async function noteSessionUse(db: Db, row: SessionRow, device: RequestDevice, now: Date): Promise<void> {
  const last = row.lastActivityAt?.getTime();
  const unrecorded =
    row.ipAddress === null && row.userAgent === null && (device.ipAddress ?? device.userAgent) !== null;
  if (!unrecorded && last !== undefined && now.getTime() - last < SESSION_ACTIVITY_STEP_MS) return;
  await touchSession(db, row.id, device, now);
}

/**
 * `listSessions`: the user's sessions that are still kept (active, revoked or expired; the
 * retention sweep drops them 7 days after expiry), each with its status. Unknown user: 404.
 */
export async function listSessions(scope: Scope, input: z.infer<typeof ListSessionsInput>) {
  const user = await findUser(scope.db, scope.env.id, input.id);
  const page = await pageOfUserSessions(scope.db, scope.env.id, user.id, pageParams(input));
  const now = scope.now();
  return asList(page, (row) => toSession(row, now));
}

/** A session's wire shape and its last client-surface activity, which the client surfaces show. */
export interface SessionView {
  session: Session;
  lastActivityAt: string | null;
}

const viewOf = (row: SessionRow, now: Date): SessionView => ({
  session: toSession(row, now),
  lastActivityAt: row.lastActivityAt ? iso(row.lastActivityAt) : null,
});

/** The user's live sessions (not revoked, not expired), newest first, at most `limit`: the client surfaces' lists. */
export async function listLiveSessions(scope: Scope, userId: string, limit?: number): Promise<SessionView[]> {
  const now = scope.now();
  return (await liveSessionsOfUser(scope.db, scope.env.id, userId, now, limit)).map((row) => viewOf(row, now));
}

/**
 * `revokeSession`: ends the session, and so every token bound to it, on every surface (the
 * client-token check reads the session on each use). Revoking a revoked or expired session
 * changes nothing and answers it as it is; only a revocation records `session.revoked`.
 * With `ownerId` (a user revoking their own), a session of anyone else is 404, as if absent.
 */
export async function revokeSession(scope: Scope, sessionId: string, ownerId?: string): Promise<SessionView> {
  return scope.db.transaction(async (tx) => {
    const current = await findSession(tx, scope.env.id, sessionId, 'update');
    if (ownerId !== undefined && current.userId !== ownerId) throw notFound('session', sessionId);
    const now = scope.now();
    if (statusOf(current, now) !== 'active') return viewOf(current, now);
    const revoked = viewOf(await markSessionRevoked(tx, current.id, now), now);
    await recordEvent(tx, scope, 'session.revoked', revoked.session);
    return revoked;
  });
}

/**
 * Ends the user's live sessions that `filter` names, in the caller's transaction, each with
 * `session.revoked`, and answers how many: those of an organization whose membership stopped
 * (deactivated or deleted: their tokens were refused already, as the session check joins the
 * active membership; this makes the sessions say so, and a reactivated membership needs a new
 * session), or every one but the caller's ("sign out of all other devices", one statement).
 */
export async function endLiveSessions(tx: Db, scope: Scope, filter: LiveSessionsFilter): Promise<number> {
  const now = scope.now();
  const ended = await revokeLiveSessions(tx, scope.env.id, filter, now);
  for (const row of ended) await recordEvent(tx, scope, 'session.revoked', toSession(row, now));
  return ended.length;
}

/**
 * The live sessions of users whose memberships of the organization stopped end, each with
 * `session.revoked` (registered with the memberships at composition, app-router.ts).
 */
export function endSessionsOfStoppedMemberships(
  tx: Db,
  scope: Scope,
  stopped: { organizationId: string; userIds: string[] },
): Promise<number> {
  const [only] = stopped.userIds;
  if (stopped.userIds.length === 1 && only !== undefined) {
    return endLiveSessions(tx, scope, { userId: only, organizationId: stopped.organizationId });
  }
  return endOrganizationSessions(tx, scope, stopped.organizationId, stopped.userIds);
}

/**
 * `endLiveSessions` for many users of one organization at once (a directory deprovisioning its
 * members): their live sessions there end in one statement, each with `session.revoked`.
 */
export async function endOrganizationSessions(
  tx: Db,
  scope: Scope,
  organizationId: string,
  userIds: string[],
): Promise<number> {
  const now = scope.now();
  const ended = await revokeLiveSessionsOfUsers(tx, scope.env.id, organizationId, userIds, now);
  await recordEvents(
    tx,
    scope,
    ended.map((row) => ({ event: 'session.revoked', data: toSession(row, now) })),
  );
  return ended.length;
}
