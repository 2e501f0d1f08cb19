// Client-kind tokens (`Authorization: Bearer <JWT>` on the client surfaces): an operation-20
// client token bound to a stored user session, a widget token (widget-token.ts) or an
// admin-portal token (portal-session.ts). One verification, then the principal of its kind.
import { decodeJwt, type JWTPayload } from 'jose';
import { environmentsOfClientIds } from '../environments/store.ts';
import { processCache } from '../invalidation/cache.ts';
import type { RequestDevice } from '../kernel/context.ts';
import type { Deps } from '../kernel/deps.ts';
import { type ClientPrincipal, clientTokenRefused } from '../kernel/principals.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { membershipPermissionSlugs } from '../organization-memberships/store.ts';
import { noteSessionUse } from '../sessions/service.ts';
import { liveSession } from '../sessions/store.ts';
import { rememberedClaims, verifyToken } from '../signing/service.ts';
import { bearer } from './bearer.ts';
import { isPortalClaim, portalPrincipal } from './portal-session.ts';
import { grantOfWidgetPayload, isWidgetClaim } from './widget-token.ts';

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

/** A client token's audience is `<client id>:client_api` (signing/service.ts TOKEN_KINDS). */
const CLIENT_AUDIENCE = /^(client_[0-9A-Za-z]+):client_api$/;

/**
 * The client id a token claims to be for, read before any check (verification follows); a token
 * this process verified before is not decoded again.
 */
function claimedClientId(deps: Deps, token: string): string | undefined {
  try {
    const { aud } = rememberedClaims(deps, token) ?? decodeJwt(token);
    const audience = Array.isArray(aud) ? aud[0] : aud;
    return typeof audience === 'string' ? CLIENT_AUDIENCE.exec(audience)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * This process's environments by client id (at most 10,000), kept as API keys are (api-key.ts):
 * while this process hears invalidations, until an `environment` one names it (flags changed);
 * else for `apiKeyCacheTtlMs`.
 */
const environmentCache = processCache<EnvironmentInfo>({
  max: 10_000,
  untilNotified: true,
  forget: { environment: (env, id) => env.id === id },
});

/**
 * The environment a token's audience names (cached, above). Unknown client ids are not cached;
 * they are read through one batched query in flight (lib/batched-lookup.ts), so tokens naming
 * made-up client ids cost at most one connection. The session (and so revocation) is read on
 * every request.
 */
function environmentOf(deps: Deps, clientId: string): Promise<EnvironmentInfo | undefined> {
  return environmentCache(deps).resolve(clientId, Date.now(), deps.config.apiKeyCacheTtlMs, () =>
    batchedLookupOf<EnvironmentInfo>(deps.db, 'client-environments', async (ids) => {
      const rows = await environmentsOfClientIds(deps.db, ids);
      return new Map(rows.map((row) => [row.clientId, row]));
    }).get(clientId),
  );
}

export interface ClientCaller {
  env: EnvironmentInfo;
  principal: ClientPrincipal;
}

/**
 * The one authentication of the client surfaces: `Authorization: Bearer <client or widget
 * token>`, verified as `verifyClientToken` does (signature, kind, issuer, audience, expiry), then
 * what the token is bound to, read on every use: an operation-20 token's live stored session
 * (its permissions: those its membership's roles grant now); a widget token's active membership
 * (its permissions: those it carries that the membership's roles still grant now) or, without a
 * user, its organization; a portal token's live portal session. Anything else is 403 (the widgets
 * recover only from 403). `device` is where the request came from; a user session notes it
 * (`noteSessionUse`).
 */
export function authenticateClientToken(
  deps: Deps,
  header: string | undefined,
  device?: RequestDevice,
): Promise<ClientCaller> {
  return authenticateClientBearer(deps, bearer(header), device);
}

/**
 * `authenticateClientToken` for a token already read from its `Authorization` header (the
 * pipeline's authenticate step reads it once for every credential kind).
 */
export async function authenticateClientBearer(
  deps: Deps,
  token: string | undefined,
  device?: RequestDevice,
): Promise<ClientCaller> {
  const clientId = token ? claimedClientId(deps, token) : undefined;
  if (!token || !clientId) throw clientTokenRefused();
  const env = await environmentOf(deps, clientId);
  if (!env) throw clientTokenRefused();
  const payload = await verifyToken(deps, env, 'client', token);
  if (!payload) throw clientTokenRefused();
  // An admin-portal session is one more principal behind the same token check (issue #23).
  if (isPortalClaim(payload)) {
    const principal = await portalPrincipal(deps, env, payload);
    if (!principal) throw clientTokenRefused();
    return { env, principal };
  }
  if (isWidgetClaim(payload)) {
    const grant = await grantOfWidgetPayload(deps, env, payload);
    if (!grant) throw clientTokenRefused();
    const { widgetSessionId, ...rest } = grant;
    return { env, principal: { kind: 'widgets', sessionId: widgetSessionId, ...rest } };
  }
  const grant = await grantOfClientPayload(deps, env, payload, device);
  if (!grant) throw clientTokenRefused();
  const permissions = await membershipPermissionSlugs(deps.db, env.id, grant.organizationId, grant.userId);
  return {
    env,
    principal: {
      kind: 'client',
      organizationId: grant.organizationId,
      userId: grant.userId,
      sessionId: grant.sessionId,
      permissions,
      expiresAt: grant.expiresAt,
    },
  };
}
