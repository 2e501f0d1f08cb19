import type { Db } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import type { ListSessionsInput, Session } from './schemas.ts';
import {
  findSession,
  findSessionOwner,
  liveSessionsOfUser,
  markSessionRevoked,
  pageOfUserSessions,
  revokeLiveSessionsOfMembership,
  type SessionRow,
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
    ip_address: null,
    user_agent: null,
    auth_method: 'external_auth',
    status,
    expires_at: iso(row.expiresAt),
    ended_at: endedAt ? iso(endedAt) : null,
    created_at: iso(row.createdAt),
    // A session changes once at most: when it is revoked.
    updated_at: iso(row.revokedAt ?? row.createdAt),
  };
}

/**
 * `listSessions`: the user's sessions that are still kept (active, revoked or expired; the
 * retention sweep drops them 7 days after expiry), each with its status. Unknown user: 404.
 */
export async function listSessions(scope: Scope, input: z.infer<typeof ListSessionsInput>) {
  const user = await findSessionOwner(scope.db, scope.env.id, input.id);
  const page = await pageOfUserSessions(scope.db, scope.env.id, user.id, pageParams(input));
  const now = scope.now();
  return asList(page, (row) => toSession(row, now));
}

/** The user's live sessions (not revoked, not expired), newest first, at most `limit`: the client surfaces' lists. */
export async function listLiveSessions(scope: Scope, userId: string, limit?: number): Promise<Session[]> {
  const now = scope.now();
  return (await liveSessionsOfUser(scope.db, scope.env.id, userId, now, limit)).map((row) => toSession(row, now));
}

/**
 * `revokeSession`: ends the session, and so every token bound to it, on every surface (the
 * client-token check reads the session on each use). Revoking a revoked or expired session
 * changes nothing and answers it as it is; only a revocation records `session.revoked`.
 * With `ownerId` (a user revoking their own), a session of anyone else is 404, as if absent.
 */
export async function revokeSession(scope: Scope, sessionId: string, ownerId?: string): Promise<Session> {
  return scope.db.transaction(async (tx) => {
    const current = await findSession(tx, scope.env.id, sessionId, 'update');
    if (ownerId !== undefined && current.userId !== ownerId) throw notFound('session', sessionId);
    const now = scope.now();
    if (statusOf(current, now) !== 'active') return toSession(current, now);
    const session = toSession(await markSessionRevoked(tx, current.id, now), now);
    await recordEvent(tx, scope, 'session.revoked', session);
    return session;
  });
}

/**
 * Ends the user's live sessions of an organization whose membership stopped (deactivated or
 * deleted), in the caller's transaction, each with `session.revoked`. Their tokens were refused
 * already (the session check joins the active membership); this makes the sessions say so, and a
 * reactivated membership needs a new session.
 */
export async function endSessionsOfMembership(
  tx: Db,
  scope: Scope,
  membership: { userId: string; organizationId: string },
): Promise<void> {
  const now = scope.now();
  const ended = await revokeLiveSessionsOfMembership(
    tx,
    scope.env.id,
    membership.userId,
    membership.organizationId,
    now,
  );
  for (const row of ended) await recordEvent(tx, scope, 'session.revoked', toSession(row, now));
}
