// Widget tokens (`POST /widgets/token`): a client-kind JWT carrying `permissions`, for the
// official widgets; its grant is read again on every use (client-token.ts verifies the JWT).
import type { JWTPayload } from 'jose';
import type { Deps } from '../kernel/deps.ts';
import { heldWidgetPermissions } from '../organization-memberships/store.ts';
import { organizationExists } from '../organizations/store.ts';

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
