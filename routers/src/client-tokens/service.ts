import { randomUUID } from 'node:crypto';
import { newId, organizationMemberships, organizations, sessions, users } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { ApiError, notFound } from '../errors.ts';
import { loadKeys, signToken } from '../signing/service.ts';
import type { ClientToken } from './schemas.ts';

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
  // Load (or make) the signing keys first; the session then expires exactly with its token.
  await loadKeys(scope.deps, scope.env.id, scope.env.clientId);
  const issuedAt = new Date(Math.floor(scope.now().getTime() / 1000) * 1000);
  const sessionId = await scope.db.transaction(async (tx) => {
    const [organization] = await tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(eq(organizations.id, input.organization_id), eq(organizations.environmentId, scope.env.id)))
      .limit(1);
    if (!organization) throw notFound('organization', input.organization_id);
    const [user] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.id, input.user_id), eq(users.environmentId, scope.env.id)))
      .limit(1);
    if (!user) throw notFound('user', input.user_id);
    const [membership] = await tx
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
    if (membership?.status !== 'active') {
      const message = `User '${user.id}' has no active membership of organization '${organization.id}'.`;
      throw new ApiError(422, 'organization_membership_required', message, [
        { field: 'user_id', code: 'organization_membership_required', message },
      ]);
    }
    const id = newId('session');
    await tx.insert(sessions).values({
      id,
      environmentId: scope.env.id,
      userId: user.id,
      organizationId: organization.id,
      expiresAt: new Date(issuedAt.getTime() + ttl * 1000),
      createdAt: issuedAt,
    });
    return id;
  });
  const signed = await signToken(
    scope.deps,
    scope.env,
    { sub: input.user_id, org_id: input.organization_id, sid: sessionId, jti: randomUUID() },
    ttl,
    issuedAt,
  );
  return { token: signed.token };
}
