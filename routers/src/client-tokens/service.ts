import { randomUUID } from 'node:crypto';
import { type Db, newId } from '@atrium/db';
import type { JWTPayload } from 'jose';
import { recordEvent } from '../events/record.ts';
import type { RequestDevice } from '../kernel/context.ts';
import type { Deps } from '../kernel/deps.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { membershipStatus } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { noteSessionUse, toSession } from '../sessions/service.ts';
import { insertSession, liveSession } from '../sessions/store.ts';
import { signToken, verifyToken } from '../signing/service.ts';
import { findUser, markSignedIn } from '../users/store.ts';
import type { ClientToken } from './schemas.ts';
import { heldWidgetPermissions, organizationExists, purgeSessionsBefore } from './store.ts';

function membershipRequired(userId: string, organizationId: string): ApiError {
  const message = `User '${userId}' has no active membership of organization '${organizationId}'.`;
  return new ApiError(422, 'organization_membership_required', message, [
    { field: 'user_id', code: 'organization_membership_required', message },
  ]);
}

/** The contract caps a client token's lifetime at 15 minutes. */
const MAX_CLIENT_TOKEN_SECONDS = 15 * 60;

/**
 * Operation 20: a short-lived RS256 token for the client API, bound to a new stored session
 * (`sid`). The organization must exist in the environment (404), the user too (404), and the
 * user must hold an active membership of the organization (422 `organization_membership_required`).
 */
export function createClientToken(
  scope: Scope,
  input: { organization_id: string; user_id: string },
): Promise<ClientToken> {
  return issueSessionToken(scope, input);
}

/**
 * `widgets.createToken`: a client-kind token for the official widgets, bound to the membership
 * (or, without `user_id`, to the organization), never to a session: nothing is stored, no one is
 * signed in, the user's sessions do not change. Its `permissions` are the scopes asked for,
 * restricted (as upstream does) to those the roles of the user's active membership grant now; a
 * scope the user lacks is left out, not refused. Without a user (upstream: `user_id` optional)
 * the scopes are granted as asked: the backend holding the API key speaks for the organization,
 * as with a portal link. `sid` is the token's own id (`widget_session_…`), which no session list
 * holds; it is also `sub` of a token without a user. The permissions are checked again on every use (`grantOfWidgetPayload`).
 */
export async function createWidgetToken(
  scope: Scope,
  input: { organization_id: string; user_id?: string | undefined; scopes: string[] },
): Promise<ClientToken> {
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const asked = [...new Set(input.scopes)];
  const sid = newId('widgetSession');
  // Without a user, `sub` is the token's own id, as a portal token's is its session's.
  let sub = sid;
  let permissions = asked;
  if (input.user_id !== undefined) {
    const user = await findUser(scope.db, scope.env.id, input.user_id);
    const held = await heldWidgetPermissions(scope.db, scope.env.id, organization.id, user.id);
    if (!held) throw membershipRequired(user.id, organization.id);
    sub = user.id;
    permissions = asked.filter((slug) => held.has(slug));
  }
  const claims = { sub, org_id: organization.id, sid, jti: randomUUID(), permissions };
  const signed = await signToken(scope.deps, scope.env, 'client', claims, clientTokenTtl(scope), issuedAtOf(scope));
  return { token: signed.token };
}

/** A client-kind token's lifetime: the configured one, at most the contract's 15 minutes. */
const clientTokenTtl = (scope: Scope) => Math.min(scope.deps.tokens.clientTokenTtlSeconds, MAX_CLIENT_TOKEN_SECONDS);
/** `iat`, to the second (a session expires exactly with its token). */
const issuedAtOf = (scope: Scope) => new Date(Math.floor(scope.now().getTime() / 1000) * 1000);

/** Signs an operation-20 token and stores the session it is bound to. */
async function issueSessionToken(
  scope: Scope,
  input: { organization_id: string; user_id: string },
): Promise<ClientToken> {
  const ttl = clientTokenTtl(scope);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const user = await findUser(scope.db, scope.env.id, input.user_id);
  const status = await membershipStatus(scope.db, scope.env.id, organization.id, user.id);
  if (status !== 'active') throw membershipRequired(user.id, organization.id);

  // Sign first (it may load or make the signing keys), then store the session in one write;
  // the session expires exactly with its token.
  const sessionId = newId('session');
  const issuedAt = issuedAtOf(scope);
  const claims = { sub: user.id, org_id: organization.id, sid: sessionId, jti: randomUUID() };
  const signed = await signToken(scope.deps, scope.env, 'client', claims, ttl, issuedAt);
  // The membership is checked again and held while the session is written: a concurrent delete
  // waits, or has won and the token is refused, never a session of a deleted user.
  await scope.db.transaction(async (tx) => {
    const held = await membershipStatus(tx, scope.env.id, organization.id, user.id, true);
    if (held !== 'active') throw membershipRequired(user.id, organization.id);
    const session = await insertSession(tx, {
      id: sessionId,
      environmentId: scope.env.id,
      userId: user.id,
      organizationId: organization.id,
      expiresAt: signed.expiresAt,
      createdAt: issuedAt,
    });
    // Issuing a client token is how a user signs in to Atrium's client surfaces.
    await markSignedIn(tx, scope.env.id, user.id, issuedAt);
    await recordEvent(tx, scope, 'session.created', toSession(session, scope.now()));
  });
  return { token: signed.token };
}

/** What a verified operation-20 client token grants: its user in its organization, for its session. */
export interface ClientTokenGrant {
  sessionId: string;
  userId: string;
  organizationId: string;
  expiresAt: Date;
}

/**
 * The one check every surface that accepts client tokens must use: the signature, `typ`, `iss`,
 * `aud` and `exp` (signing/service.ts), then the stored session it names (`sid`): of this
 * environment, for the token's user and organization, not revoked, not expired, its user still an
 * active member of the organization (a deactivated or removed member's token stops). The session is
 * read on every call, on the primary (`deps.db`), with no cache, so a revocation committed by
 * any process refuses the token from its next use on. Returns null for anything invalid.
 */
export async function verifyClientToken(
  deps: Deps,
  env: { id: string; clientId: string },
  token: string,
): Promise<ClientTokenGrant | null> {
  const payload = await verifyToken(deps, env, 'client', token);
  return payload ? grantOfClientPayload(deps, env, payload) : null;
}

/**
 * `verifyClientToken` after the signature check: the stored session a verified payload names.
 * With `device` (a client-surface request), the use is noted on the session (`noteSessionUse`).
 */
export async function grantOfClientPayload(
  deps: Deps,
  env: { id: string },
  payload: JWTPayload,
  device?: RequestDevice,
): Promise<ClientTokenGrant | null> {
  const { sid, sub, org_id: organizationId } = payload;
  if (typeof sid !== 'string' || typeof sub !== 'string' || typeof organizationId !== 'string') return null;
  if (isWidgetClaim(payload)) return null; // bound to no session: grantOfWidgetPayload
  const now = deps.now();
  const session = await liveSession(deps.db, env.id, sid, now);
  if (!session || session.userId !== sub || session.organizationId !== organizationId) return null;
  if (device) await noteSessionUse(deps.db, session, device, now);
  return { sessionId: session.id, userId: session.userId, organizationId, expiresAt: session.expiresAt };
}

/** Whether a verified client-kind payload is a widget token's: it carries `permissions` (`POST /widgets/token`). */
export const isWidgetClaim = (payload: JWTPayload) => payload.permissions !== undefined;

/** What a verified widget token grants now: its user (or none) in its organization, with these permissions. */
export interface WidgetTokenGrant {
  /** The token's own id (`sid`, `widget_session_…`); no session row holds it. */
  widgetSessionId: string;
  userId: string | null;
  organizationId: string;
  permissions: string[];
  expiresAt: Date;
}

/**
 * A verified widget token's grant on this use: with a user, their membership of the organization
 * must still be active and the token's permissions are cut to those its roles grant **now** (a
 * demotion counts from its commit, in every process: one prepared read per use, no cache);
 * without a user, the organization must still exist. Null for anything invalid.
 */
export async function grantOfWidgetPayload(
  deps: Deps,
  env: { id: string },
  payload: JWTPayload,
): Promise<WidgetTokenGrant | null> {
  const { sid, sub, org_id: organizationId, permissions: claimed, exp } = payload;
  if (typeof sid !== 'string' || typeof organizationId !== 'string' || typeof exp !== 'number') return null;
  if (!Array.isArray(claimed) || !claimed.every((p) => typeof p === 'string')) return null;
  const expiresAt = new Date(exp * 1000);
  if (sub === sid) {
    if (!(await organizationExists(deps.db, env.id, organizationId))) return null;
    return { widgetSessionId: sid, userId: null, organizationId, permissions: claimed, expiresAt };
  }
  if (typeof sub !== 'string') return null;
  const held = await heldWidgetPermissions(deps.db, env.id, organizationId, sub);
  if (!held) return null;
  const permissions = claimed.filter((slug) => held.has(slug));
  return { widgetSessionId: sid, userId: sub, organizationId, permissions, expiresAt };
}

/** A session is kept this long past its expiry (a record of who held a token), then purged. */
export const SESSION_RETENTION_MS = 7 * 86_400_000;

/**
 * Deletes sessions that expired more than `SESSION_RETENTION_MS` ago, in batches, so that a
 * tenant minting client tokens cannot grow the table without bound. Returns how many went.
 */
export async function purgeExpiredSessions(db: Db, now: Date, batchSize = 5_000): Promise<number> {
  const cutoff = new Date(now.getTime() - SESSION_RETENTION_MS);
  let total = 0;
  for (;;) {
    const deleted = await purgeSessionsBefore(db, cutoff, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
