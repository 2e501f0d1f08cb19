import { randomUUID } from 'node:crypto';
import { type Db, newId } from '@atrium/db';
import type { JWTPayload } from 'jose';
import type { Deps, RequestDevice, Scope } from '../context.ts';
import { ApiError } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { membershipStatus } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { noteSessionUse, toSession } from '../sessions/service.ts';
import { insertSession, liveSession } from '../sessions/store.ts';
import { signToken, verifyToken } from '../signing/service.ts';
import { findUser, markSignedIn } from '../users/store.ts';
import type { ClientToken } from './schemas.ts';
import { purgeSessionsBefore } from './store.ts';

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
  return issueSessionToken(scope, input, {});
}

/**
 * `widgets.createToken`: a client token that also carries `permissions` (the widget scopes asked
 * for), under the same checks and bound to a session the same way.
 */
export function createWidgetToken(
  scope: Scope,
  input: { organization_id: string; user_id: string; scopes: string[] },
): Promise<ClientToken> {
  return issueSessionToken(scope, input, { permissions: [...new Set(input.scopes)] });
}

/** Signs a client-kind token with `claims` and stores the session it is bound to. */
async function issueSessionToken(
  scope: Scope,
  input: { organization_id: string; user_id: string },
  claims: { permissions?: string[] },
): Promise<ClientToken> {
  const ttl = Math.min(scope.deps.tokens.clientTokenTtlSeconds, MAX_CLIENT_TOKEN_SECONDS);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const user = await findUser(scope.db, scope.env.id, input.user_id);
  const status = await membershipStatus(scope.db, scope.env.id, organization.id, user.id);
  if (status !== 'active') throw membershipRequired(user.id, organization.id);

  // Sign first (it may load or make the signing keys), then store the session in one write;
  // the session expires exactly with its token.
  const sessionId = newId('session');
  const issuedAt = new Date(Math.floor(scope.now().getTime() / 1000) * 1000);
  const signed = await signToken(
    scope.deps,
    scope.env,
    'client',
    { sub: user.id, org_id: organization.id, sid: sessionId, jti: randomUUID(), ...claims },
    ttl,
    issuedAt,
  );
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

/** What a verified client token grants: its user in its organization, for its session. */
export interface ClientTokenGrant {
  sessionId: string;
  userId: string;
  organizationId: string;
  expiresAt: Date;
  /** The `permissions` claim of a widget token (`POST /widgets/token`); absent on an operation-20 token. */
  permissions?: string[] | undefined;
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
  const now = deps.now();
  const session = await liveSession(deps.db, env.id, sid, now);
  if (!session || session.userId !== sub || session.organizationId !== organizationId) return null;
  if (device) await noteSessionUse(deps.db, session, device, now);
  const claimed = payload.permissions;
  const permissions =
    Array.isArray(claimed) && claimed.every((p) => typeof p === 'string') ? (claimed as string[]) : undefined;
  return { sessionId: session.id, userId: session.userId, organizationId, expiresAt: session.expiresAt, permissions };
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
