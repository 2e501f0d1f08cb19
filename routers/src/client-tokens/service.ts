import { randomUUID } from 'node:crypto';
import { type Db, newId, organizationMemberships, sessions, users } from '@atrium/db';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { ApiError, notFound } from '../errors.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { signToken } from '../signing/service.ts';
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
export async function createClientToken(
  scope: Scope,
  input: { organization_id: string; user_id: string },
): Promise<ClientToken> {
  const ttl = Math.min(scope.deps.tokens.clientTokenTtlSeconds, MAX_CLIENT_TOKEN_SECONDS);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const [user] = await scope.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, input.user_id), eq(users.environmentId, scope.env.id)))
    .limit(1);
  if (!user) throw notFound('user', input.user_id);
  const [membership] = await scope.db
    .select({ status: organizationMemberships.status })
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, scope.env.id),
        eq(organizationMemberships.organizationId, organization.id),
        eq(organizationMemberships.userId, user.id),
      ),
    )
    .limit(1);
  if (membership?.status !== 'active') throw membershipRequired(user.id, organization.id);

  // Sign first (it may load or make the signing keys), then store the session in one write;
  // the session expires exactly with its token.
  const sessionId = newId('session');
  const issuedAt = new Date(Math.floor(scope.now().getTime() / 1000) * 1000);
  const signed = await signToken(
    scope.deps,
    scope.env,
    'client',
    { sub: user.id, org_id: organization.id, sid: sessionId, jti: randomUUID() },
    ttl,
    issuedAt,
  );
  // The membership is checked again and held (FOR KEY SHARE) while the session is written: a
  // concurrent delete of the membership, its user or its organization waits, or has won and
  // the token is refused as above, never a foreign-key violation or a session of a deleted user.
  await scope.db.transaction(async (tx) => {
    const [held] = await tx
      .select({ status: organizationMemberships.status })
      .from(organizationMemberships)
      .where(
        and(
          eq(organizationMemberships.environmentId, scope.env.id),
          eq(organizationMemberships.organizationId, organization.id),
          eq(organizationMemberships.userId, user.id),
        ),
      )
      .for('key share')
      .limit(1);
    if (held?.status !== 'active') throw membershipRequired(user.id, organization.id);
    await tx.insert(sessions).values({
      id: sessionId,
      environmentId: scope.env.id,
      userId: user.id,
      organizationId: organization.id,
      expiresAt: signed.expiresAt,
      createdAt: issuedAt,
    });
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
  let total = 0;
  for (;;) {
    // As the events purge does: an array of ids, found by primary key under a generic plan, in a
    // transaction so that it runs on a transaction connection rather than a pipelined one.
    const expired = db
      .select({ id: sessions.id })
      .from(sessions)
      .where(lt(sessions.expiresAt, cutoff))
      .orderBy(sessions.expiresAt)
      .limit(batchSize);
    const deleted = await db.transaction((tx) =>
      tx.delete(sessions).where(sql`${sessions.id} = any(array(${expired}))`).returning({ id: sessions.id }),
    );
    total += deleted.length;
    if (deleted.length < batchSize) return total;
  }
}
