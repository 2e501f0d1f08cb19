import { newId } from '@atrium/db';
import { iso } from '../common/schemas.ts';
import type { Deps } from '../kernel/deps.ts';
import { conflict, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { signToken, verifyToken } from '../signing/service.ts';
import type { AgentCredentialValidation, AgentRegistration } from './schemas.ts';
import {
  assertBelowAgentRegistrationsPerOrganization,
  findRegistration,
  type IdentityRow,
  insertRegistration,
  isLiveAccessToken,
  liveApiKey,
  type NewRegistration,
  type RegistrationRow,
  revokeRegistration,
} from './store.ts';

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
  const found = await findRegistration(scope.db, scope.env.id, id);
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
    const found = await liveApiKey(scope.db, scope.env.id, sha256Hex(input.credential), now);
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
  const token = { jti: payload.jti, registrationId: payload.sub, organizationId: payload.org_id };
  if (!(await isLiveAccessToken(scope.db, scope.env.id, token, now))) return INVALID;
  return { valid: true, registration_id: payload.sub, expires_at: iso(new Date(payload.exp * 1000)) };
}

/** The rows of a registration verified and claimed at once, with its API key and access token. */
function registrationRows(
  scope: Scope,
  ids: { registration: string; organization: string; accessToken: string },
  userlandUserId: string | null,
  apiKey: string,
  tokenExpiresAt: Date,
): NewRegistration {
  const now = scope.now();
  const environmentId = scope.env.id;
  const identityId = newId('agentIdentity');
  const claimExpiresAt = new Date(now.getTime() + CLAIM_TTL_MS);
  return {
    identity: { id: identityId, environmentId, userlandUserId, createdAt: now, updatedAt: now },
    registration: {
      id: ids.registration,
      environmentId,
      organizationId: ids.organization,
      agentIdentityId: identityId,
      status: 'verified',
      kind: 'service_auth',
      claimId: newId('agentRegistrationClaim'),
      claimCreatedAt: now,
      claimExpiresAt,
      claimCompletionId: newId('agentRegistrationClaimCompletion'),
      claimCompletionCreatedAt: now,
      claimCompletionExpiresAt: claimExpiresAt,
      claimedAt: now,
      createdAt: now,
      updatedAt: now,
    },
    apiKey: {
      id: newId('agentApiKey'),
      environmentId,
      registrationId: ids.registration,
      keyHash: sha256Hex(apiKey),
      keyPrefix: apiKey.slice(0, 14),
      createdAt: now,
    },
    accessToken: {
      id: ids.accessToken,
      environmentId,
      registrationId: ids.registration,
      expiresAt: tokenExpiresAt,
      createdAt: now,
    },
  };
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
    await assertBelowAgentRegistrationsPerOrganization(tx, scope, organization.id);
    const apiKey = `sk_agent_${randomBase62(40)}`;
    const ids = { registration: registrationId, organization: organization.id, accessToken: jti };
    const rows = registrationRows(scope, ids, input.userland_user_id ?? null, apiKey, signed.expiresAt);
    const registration = await insertRegistration(tx, rows);
    if (!registration) throw conflict('conflict', 'The registration could not be stored.');
    return { registration_id: registration.id, api_key: apiKey, access_token: signed.token };
  });
}

/** Admin: revokes a registration (any environment) with every key and token it holds. */
export async function revokeAgentRegistration(deps: Deps, id: string) {
  return deps.db.transaction(async (tx) => {
    const row = await revokeRegistration(tx, id, deps.now());
    if (!row) throw notFound('agent_registration', id);
    return { registration_id: row.id, environment_id: row.environmentId, status: row.status };
  });
}
