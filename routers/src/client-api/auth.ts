import { decodeJwt } from 'jose';
import { bearer } from '../auth/service.ts';
import { verifyClientToken } from '../client-tokens/service.ts';
import type { Deps, EnvironmentInfo } from '../context.ts';
import { type ClientPrincipal, clientTokenRefused } from './principal.ts';
import { environmentOfClientId, membershipPermissionSlugs } from './store.ts';

/** A client token's audience is `<client id>:client_api` (signing/service.ts TOKEN_KINDS). */
const CLIENT_AUDIENCE = /^(client_[0-9A-Za-z]+):client_api$/;

/** The client id a token claims to be for, read before any check (verification follows). */
function claimedClientId(token: string): string | undefined {
  try {
    const { aud } = decodeJwt(token);
    const audience = Array.isArray(aud) ? aud[0] : aud;
    return typeof audience === 'string' ? CLIENT_AUDIENCE.exec(audience)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

export interface ClientCaller {
  env: EnvironmentInfo;
  principal: ClientPrincipal;
}

/**
 * The one authentication of the client surfaces: `Authorization: Bearer <client or widget
 * token>`, verified by `verifyClientToken` (signature, kind, issuer, audience, expiry, and the
 * live stored session). A widget token carries its permissions; an operation-20 token gets those
 * its membership's roles grant now. Anything else is 403 (the widgets recover only from 403).
 */
export async function authenticateClientToken(deps: Deps, header: string | undefined): Promise<ClientCaller> {
  const token = bearer(header);
  const clientId = token ? claimedClientId(token) : undefined;
  if (!token || !clientId) throw clientTokenRefused();
  const env = await environmentOfClientId(deps.db, clientId);
  if (!env) throw clientTokenRefused();
  const grant = await verifyClientToken(deps, env, token);
  if (!grant) throw clientTokenRefused();
  const kind = grant.permissions ? 'widgets' : 'client';
  const permissions =
    grant.permissions ?? (await membershipPermissionSlugs(deps.db, env.id, grant.organizationId, grant.userId));
  return {
    env,
    principal: {
      kind,
      organizationId: grant.organizationId,
      userId: grant.userId,
      sessionId: grant.sessionId,
      permissions,
      expiresAt: grant.expiresAt,
    },
  };
}
