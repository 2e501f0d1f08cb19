import { randomUUID } from 'node:crypto';
import { type Db, newId } from '@atrium/db';
import { recordEvent } from '../events/record.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { inBatches } from '../lib/batches.ts';
import { heldWidgetPermissions, membershipStatus } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { toSession } from '../sessions/service.ts';
import { insertSession, purgeSessionsBefore } from '../sessions/store.ts';
import { signToken } from '../signing/service.ts';
import { findUser, markSignedIn } from '../users/store.ts';
import type { ClientToken } from './schemas.ts';

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

/** A session is kept this long past its expiry (a record of who held a token), then purged. */
export const SESSION_RETENTION_MS = 7 * 86_400_000;

/**
 * Deletes sessions that expired more than `SESSION_RETENTION_MS` ago, in batches, so that a
 * tenant minting client tokens cannot grow the table without bound. Returns how many went.
 */
export async function purgeExpiredSessions(db: Db, now: Date, batchSize = 5_000): Promise<number> {
  const cutoff = new Date(now.getTime() - SESSION_RETENTION_MS);
  return inBatches(batchSize, (size) => purgeSessionsBefore(db, cutoff, size));
}
