import type { PortalIntent } from '@atrium/db';
import type { WidgetScope } from '../../kernel/principals.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import { createPortalLink, type IssuedPortalLink, ownPortalPage, requireServedIntent } from '../../portal/service.ts';

/** The widget scope a user's token needs to ask for a link of each intent (WIDGETS-API.md §3). */
const LINK_SCOPES: Record<PortalIntent, WidgetScope> = {
  domain_verification: 'widgets:domain-verification:manage',
  sso: 'widgets:sso:manage',
};

/**
 * A portal link for the client caller's own organization (widgets `generate-link`, GraphQL
 * `createAdminPortalLink`, `client.adminPortal.createLink`): the caller needs the intent's scope.
 * A portal session's own widgets get its own page instead (no new link, no new session).
 */
export async function createPortalLinkForClient(scope: ClientScope, intent: string): Promise<IssuedPortalLink> {
  const served = requireServedIntent(intent);
  if (scope.client.kind === 'portal') return ownPortalPage(scope, scope.client.sessionId, served);
  requirePermission(scope, LINK_SCOPES[served]);
  return createPortalLink(scope, { organization: scope.client.organizationId, intent: served });
}
