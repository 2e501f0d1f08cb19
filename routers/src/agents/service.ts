import { agentAccessTokens, agentApiKeys, agentIdentities, agentRegistrations, newId } from '@atrium/db';
import { and, eq, gt, isNull, or } from 'drizzle-orm';
import { iso } from '../common/schemas.ts';
import type { Deps, Scope } from '../context.ts';
import { conflict, notFound } from '../errors.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowQuota } from '../quotas.ts';
import { signToken, verifyToken } from '../signing/service.ts';
import type { AgentCredentialValidation, AgentRegistration } from './schemas.ts';

type RegistrationRow = typeof agentRegistrations.$inferSelect;
type IdentityRow = typeof agentIdentities.$inferSelect;

const AGENT_API_KEY = /^sk_agent_[0-9A-Za-z]{40}$/;
/** How long an unclaimed registration's claim (and a claim completion) stays open. */
const CLAIM_TTL_MS = 7 * 86_400_000;

const MAX_CREDENTIAL_LENGTH = 16_384;

const INVALID: AgentCredentialValidation = { valid: false, registration_id: null, expires_at: null };

/** The single place that turns a registration (with its identity) into its wire shape. */
export function toAgentRegistration(row: RegistrationRow, identity: IdentityRow): AgentRegistration {
  const completion =
    row.claimCompletionId && row.claimCompletionCreatedAt && row.claimCompletionExpiresAt && row.claimedAt
      ? {
          id: row.claimCompletionId,
          created_at: iso(row.claimCompletionCreatedAt),
          updated_at: iso(row.claimCompletionCreatedAt),
          expires_at: iso(row.claimCompletionExpiresAt),
          claimed_at: iso(row.claimedAt),
        }
      : null;
  return {
    object: 'agent_registration',
    id: row.id,
    agent_identity: {
      id: identity.id,
      userland_user_id: identity.userlandUserId,
      created_at: iso(identity.createdAt),
      updated_at: iso(identity.updatedAt),
    },
    organization_id: row.organizationId,
    status: row.status,
    kind: row.kind,
    claim: {
      id: row.claimId,
      claim_completion: completion,
      created_at: iso(row.claimCreatedAt),
      updated_at: iso(row.claimedAt ?? row.claimCreatedAt),
      expires_at: iso(row.claimExpiresAt),
    },
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Operation 19: one registration of the caller's environment. */
export async function getAgentRegistration(scope: Scope, id: string): Promise<AgentRegistration> {
  const [found] = await scope.db
    .select({ registration: agentRegistrations, identity: agentIdentities })
    .from(agentRegistrations)
    .innerJoin(agentIdentities, eq(agentIdentities.id, agentRegistrations.agentIdentityId))
    .where(and(eq(agentRegistrations.id, id), eq(agentRegistrations.environmentId, scope.env.id)))
    .limit(1);
  if (!found) throw notFound('agent_registration', id);
  return toAgentRegistration(found.registration, found.identity);
}

/**
 * Operation 18: a read-only check of an agent credential against the caller's environment.
 * Anything that is not a live credential of a verified registration of this environment
 * (garbage, bad signature, wrong audience, expired, revoked, foreign) answers `valid: false`.
 */
export async function validateAgentCredential(
  scope: Scope,
  input: { type: 'access_token' | 'api_key'; credential: string; audience?: string | undefined },
): Promise<AgentCredentialValidation> {
  const now = scope.now();
  if (input.credential.length > MAX_CREDENTIAL_LENGTH) return INVALID;
  if (input.type === 'api_key') {
    if (!AGENT_API_KEY.test(input.credential)) return INVALID;
    const [found] = await scope.db
      .select({ registrationId: agentApiKeys.registrationId, expiresAt: agentApiKeys.expiresAt })
      .from(agentApiKeys)
      .innerJoin(agentRegistrations, eq(agentRegistrations.id, agentApiKeys.registrationId))
      .where(
        and(
          eq(agentApiKeys.keyHash, sha256Hex(input.credential)),
          eq(agentApiKeys.environmentId, scope.env.id),
          isNull(agentApiKeys.revokedAt),
          or(isNull(agentApiKeys.expiresAt), gt(agentApiKeys.expiresAt, now)),
          eq(agentRegistrations.environmentId, scope.env.id),
          eq(agentRegistrations.status, 'verified'),
        ),
      )
      .limit(1);
    if (!found) return INVALID;
    return {
      valid: true,
      registration_id: found.registrationId,
      expires_at: found.expiresAt ? iso(found.expiresAt) : null,
    };
  }

  const payload = await verifyToken(scope.deps, scope.env, 'agent', input.credential, input.audience);
  if (
    !payload ||
    typeof payload.sub !== 'string' ||
    typeof payload.jti !== 'string' ||
    typeof payload.org_id !== 'string' ||
    typeof payload.exp !== 'number' ||
    typeof payload.iat !== 'number'
  ) {
    return INVALID;
  }
  const [found] = await scope.db
    .select({ id: agentAccessTokens.id })
    .from(agentAccessTokens)
    .innerJoin(agentRegistrations, eq(agentRegistrations.id, agentAccessTokens.registrationId))
    .where(
      and(
        eq(agentAccessTokens.id, payload.jti),
        eq(agentAccessTokens.environmentId, scope.env.id),
        eq(agentAccessTokens.registrationId, payload.sub),
        isNull(agentAccessTokens.revokedAt),
        gt(agentAccessTokens.expiresAt, now),
        eq(agentRegistrations.environmentId, scope.env.id),
        eq(agentRegistrations.organizationId, payload.org_id),
        eq(agentRegistrations.status, 'verified'),
      ),
    )
    .limit(1);
  if (!found) return INVALID;
  return { valid: true, registration_id: payload.sub, expires_at: iso(new Date(payload.exp * 1000)) };
}

/**
 * Admin: registers an agent of an organization, verified and claimed at once, with one agent
 * API key and one access token (both shown once).
 */
export async function registerAgent(
  scope: Scope,
  input: { organization_id: string; userland_user_id?: string | undefined },
): Promise<{ registration_id: string; api_key: string; access_token: string }> {
  // Sign first (it may load or make the signing keys): the transaction then only writes rows.
  const registrationId = newId('agentRegistration');
  const jti = newId('agentAccessToken');
  const signed = await signToken(
    scope.deps,
    scope.env,
    'agent',
    { sub: registrationId, jti, org_id: input.organization_id },
    scope.deps.tokens.agentAccessTokenTtlSeconds,
  );
  return scope.db.transaction(async (tx) => {
    // Held until the registration is written (a concurrent organization delete waits or has won).
    // NO KEY UPDATE also serialises the registrations counted against the organization's quota.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowQuota(
      tx,
      scope.deps,
      'agentRegistrationsPerOrganization',
      agentRegistrations,
      and(eq(agentRegistrations.environmentId, scope.env.id), eq(agentRegistrations.organizationId, organization.id)),
    );
    const now = scope.now();
    const identityId = newId('agentIdentity');
    await tx.insert(agentIdentities).values({
      id: identityId,
      environmentId: scope.env.id,
      userlandUserId: input.userland_user_id ?? null,
      createdAt: now,
      updatedAt: now,
    });
    const [registration] = await tx
      .insert(agentRegistrations)
      .values({
        id: registrationId,
        environmentId: scope.env.id,
        organizationId: organization.id,
        agentIdentityId: identityId,
        status: 'verified',
        kind: 'service_auth',
        claimId: newId('agentRegistrationClaim'),
        claimCreatedAt: now,
        claimExpiresAt: new Date(now.getTime() + CLAIM_TTL_MS),
        claimCompletionId: newId('agentRegistrationClaimCompletion'),
        claimCompletionCreatedAt: now,
        claimCompletionExpiresAt: new Date(now.getTime() + CLAIM_TTL_MS),
        claimedAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!registration) throw conflict('conflict', 'The registration could not be stored.');
    const apiKey = `sk_agent_${randomBase62(40)}`;
    await tx.insert(agentApiKeys).values({
      id: newId('agentApiKey'),
      environmentId: scope.env.id,
      registrationId: registration.id,
      keyHash: sha256Hex(apiKey),
      keyPrefix: apiKey.slice(0, 14),
      createdAt: now,
    });
    await tx.insert(agentAccessTokens).values({
      id: jti,
      environmentId: scope.env.id,
      registrationId: registration.id,
      expiresAt: signed.expiresAt,
      createdAt: now,
    });
    return { registration_id: registration.id, api_key: apiKey, access_token: signed.token };
  });
}

/** Admin: revokes a registration (any environment) with every key and token it holds. */
export async function revokeAgentRegistration(deps: Deps, id: string) {
  return deps.db.transaction(async (tx) => {
    const now = deps.now();
    const [row] = await tx
      .update(agentRegistrations)
      .set({ status: 'revoked', updatedAt: now })
      .where(eq(agentRegistrations.id, id))
      .returning();
    if (!row) throw notFound('agent_registration', id);
    const scoped = (table: typeof agentApiKeys | typeof agentAccessTokens) =>
      and(eq(table.environmentId, row.environmentId), eq(table.registrationId, row.id), isNull(table.revokedAt));
    await tx.update(agentApiKeys).set({ revokedAt: now }).where(scoped(agentApiKeys));
    await tx.update(agentAccessTokens).set({ revokedAt: now }).where(scoped(agentAccessTokens));
    return { registration_id: row.id, environment_id: row.environmentId, status: row.status };
  });
}
