// Admin-portal sessions (issue #23): the cookie a portal link opens (with its CSRF token), and
// the portal principal of a client-kind token minted for such a session (no user).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Deps } from '../kernel/deps.ts';
import type { ClientPrincipal } from '../kernel/principals.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { sameDigest, sha256Hex } from '../lib/random.ts';
import { PORTAL_SCOPES } from '../portal/service.ts';
import { type LivePortalSession, livePortalSession } from '../portal/store.ts';

/** The live session a portal cookie (`<id>.<secret>`) names, or undefined. */
export async function portalSessionOfCookie(
  deps: Deps,
  cookie: string | undefined,
): Promise<LivePortalSession | undefined> {
  const [id, secret, extra] = (cookie ?? '').split('.');
  if (!id?.startsWith('portal_session_') || !secret || extra !== undefined || id.length > 64) return undefined;
  const live = await livePortalSession(deps.db, id, deps.now());
  if (!live || !sameDigest(live.session.secretHash, sha256Hex(secret))) return undefined;
  return live;
}

/** The CSRF token of a portal session: an HMAC of its id under the master key (never stored). */
export function portalCsrfToken(deps: Deps, sessionId: string): string {
  return createHmac('sha256', deps.tokens.masterKey).update(`portal-csrf:${sessionId}`).digest('base64url');
}

/** Whether `sent` is the session's CSRF token (constant time). */
export function portalCsrfMatches(deps: Deps, sessionId: string, sent: string | undefined): boolean {
  const expected = Buffer.from(portalCsrfToken(deps, sessionId));
  const given = Buffer.from(sent ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether a verified client token's session is an admin-portal session (its `sid` says so). */
export const isPortalClaim = (payload: JWTPayload) =>
  typeof payload.sid === 'string' && payload.sid.startsWith('portal_session_');

/**
 * The portal principal of a verified client token: its portal session must still be live, of
 * this environment and of the token's organization (a deleted organization took it along). No
 * user; the permissions are the session's intent's scope.
 */
export async function portalPrincipal(
  deps: Deps,
  env: EnvironmentInfo,
  payload: JWTPayload,
): Promise<ClientPrincipal | null> {
  const live = await livePortalSession(deps.db, String(payload.sid), deps.now());
  if (!live || live.env.id !== env.id || live.session.organizationId !== payload.org_id) return null;
  const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : 0;
  return {
    kind: 'portal',
    organizationId: live.session.organizationId,
    userId: null,
    sessionId: live.session.id,
    permissions: [PORTAL_SCOPES[live.session.intent]],
    expiresAt: new Date(Math.min(exp, live.session.expiresAt.getTime())),
  };
}
