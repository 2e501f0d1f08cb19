import type { PortalIntent } from '@atrium/db';
import { z } from 'zod';
import { iso } from '../../common/schemas.ts';
import type { WidgetScope } from '../../kernel/principals.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import { createPortalLink, type IssuedPortalLink, ownPortalPage, requireServedIntent } from '../../portal/service.ts';

/** The widget scope a user's token needs to ask for a link of each intent (WIDGETS-API.md §3). */
const LINK_SCOPES: Record<PortalIntent, WidgetScope> = {
  domain_verification: 'widgets:domain-verification:manage',
  sso: 'widgets:sso:manage',
  dsync: 'widgets:dsync:manage',
  log_streams: 'widgets:audit-log-streaming:manage',
  // No widget reads the organization's events; the user who may set up its log stream may open them.
  audit_logs: 'widgets:audit-log-streaming:manage',
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

/**
 * The intents as the typed client surfaces spell them (GraphQL's `AdminPortalLinkIntent`): the
 * widgets' three (`@workos-inc/widgets` 1.18) and the two more REST's generate-link serves.
 */
export const ClientIntent = z.enum(['DomainVerification', 'Sso', 'LogStreams', 'Dsync', 'AuditLogs']);
export type ClientIntent = z.infer<typeof ClientIntent>;
const REST_INTENT: Record<ClientIntent, PortalIntent> = {
  DomainVerification: 'domain_verification',
  Sso: 'sso',
  LogStreams: 'log_streams',
  Dsync: 'dsync',
  AuditLogs: 'audit_logs',
};
const CLIENT_INTENT: Record<PortalIntent, ClientIntent> = {
  domain_verification: 'DomainVerification',
  sso: 'Sso',
  log_streams: 'LogStreams',
  dsync: 'Dsync',
  audit_logs: 'AuditLogs',
};

/** `createAdminPortalLink` (GraphQL) and `client.adminPortal.createLink`: the link in the typed shape (`AdminPortalLink`). */
export async function createClientPortalLink(scope: ClientScope, intent: ClientIntent) {
  const issued = await createPortalLinkForClient(scope, REST_INTENT[intent]);
  return { link: issued.link, intent: CLIENT_INTENT[issued.intent], expiresAt: iso(issued.expiresAt) };
}
