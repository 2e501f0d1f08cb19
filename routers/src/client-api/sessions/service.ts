import type { GeoLocation } from '../../kernel/deps.ts';
import { ApiError } from '../../kernel/errors.ts';
import { type ClientScope, requireUser } from '../../kernel/principals.ts';
import { endLiveSessions, listLiveSessions, revokeSession, type SessionView } from '../../sessions/service.ts';

/**
 * One of the caller's sessions, marked `current` when the token is bound to it, with where its
 * device was (its IP address in the deployment's GeoIP database, if one is configured).
 */
export interface OwnSession extends SessionView {
  current: boolean;
  location: GeoLocation | null;
}

function ownSession(scope: ClientScope, view: SessionView): OwnSession {
  const ip = view.session.ip_address;
  return {
    ...view,
    current: view.session.id === scope.client.sessionId,
    location: ip && scope.deps.geo ? scope.deps.geo.locate(ip) : null,
  };
}

/** The most sessions a list shows (each widget token is a session of at most 15 minutes). */
const MAX_LISTED = 100;

/**
 * The caller's live sessions, newest first: UserSessions (`GET /_widgets/UserProfile/sessions`),
 * GraphQL `sessions`, `client.sessions.list`.
 */
export async function listOwnSessions(scope: ClientScope): Promise<OwnSession[]> {
  const sessions = await listLiveSessions(scope, requireUser(scope), MAX_LISTED);
  return sessions.map((view) => ownSession(scope, view));
}

/**
 * Revokes one of the caller's sessions (its tokens are refused from then on); another user's
 * session is 404. Through sessions/service.ts, so `session.revoked` is recorded as on the API.
 */
export async function revokeOwnSession(scope: ClientScope, sessionId: string): Promise<OwnSession> {
  const userId = requireUser(scope);
  try {
    return ownSession(scope, await revokeSession(scope, sessionId, userId));
  } catch (error) {
    // The payload of GraphQL's SessionNotFound.
    if (error instanceof ApiError && error.status === 404) {
      throw new ApiError(404, error.apiCode, error.message, error.errors, undefined, { sessionId });
    }
    throw error;
  }
}

/**
 * Revokes every live session of the caller but `keepId` ("sign out of all other devices"), all
 * or none, in one transaction (one statement, and `session.revoked` for each); how many ended.
 */
export async function revokeOtherOwnSessions(scope: ClientScope, keepId: string): Promise<number> {
  const userId = requireUser(scope);
  return scope.db.transaction((tx) => endLiveSessions(tx, scope, { userId, exceptId: keepId }));
}
