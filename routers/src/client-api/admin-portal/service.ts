import { createPortalLink, type IssuedPortalLink, PORTAL_SCOPES, requireServedIntent } from '../../portal/service.ts';
import { type ClientScope, requirePermission } from '../principal.ts';

/**
 * A portal link for the client caller's own organization (widgets `generate-link`, GraphQL
 * `createAdminPortalLink`, `client.adminPortal.createLink`): the caller needs the intent's scope.
 */
export async function createPortalLinkForClient(scope: ClientScope, intent: string): Promise<IssuedPortalLink> {
  const served = requireServedIntent(intent);
  requirePermission(scope, PORTAL_SCOPES[served]);
  return createPortalLink(scope, { organization: scope.client.organizationId, intent: served });
}
