import { clientProcedure, router } from '../trpc.ts';
// Admin portal (issue #23)
import { adminPortalClientProcedures, adminPortalWidgetProcedures } from './admin-portal/router.ts';
// h22/domains: domain verification and SSO connections.
import { domainsClientProcedures, domainsWidgetProcedures } from './domains/router.ts';
import { membersClientProcedures, membersWidgetProcedures } from './members/router.ts';
// h22/self: the caller's sessions, profile, and organization.
import { organizationClientProcedures, organizationWidgetProcedures } from './organization/router.ts';
import { organizationsClientProcedures, organizationsWidgetProcedures } from './organizations/router.ts';
import { profileClientProcedures, profileWidgetProcedures } from './profile/router.ts';
import { sessionsClientProcedures, sessionsWidgetProcedures } from './sessions/router.ts';
import { ssoClientProcedures, ssoWidgetProcedures } from './sso/router.ts';

/**
 * The client surfaces' procedures, authorized by client and widget tokens (`clientProcedure`),
 * confined to the token's organization and user. Each area adds its procedures here.
 */

/** `/_widgets/…`: the REST API the official WorkOS Widgets call, with their exact paths and shapes. */
export const widgetsRouter = router({
  ...organizationsWidgetProcedures,
  // Admin portal (issue #23): row 19.
  ...adminPortalWidgetProcedures,
  // h22/members: UsersManagement (rows 1–8).
  ...membersWidgetProcedures,
  // h22/self
  ...sessionsWidgetProcedures,
  ...profileWidgetProcedures,
  ...organizationWidgetProcedures,
  // h22/domains
  ...domainsWidgetProcedures,
  ...ssoWidgetProcedures,
});

/** `client.*` over `/trpc`: typed tRPC for TypeScript frontends, the operations of `/client/graphql`. */
export const clientRouter = router({
  status: clientProcedure.query(() => 'ok' as const),
  ...organizationsClientProcedures,
  // Admin portal (issue #23).
  adminPortal: router(adminPortalClientProcedures),
  // h22/members: `client.members.*`.
  members: router(membersClientProcedures),
  // h22/self
  ...sessionsClientProcedures,
  ...profileClientProcedures,
  ...organizationClientProcedures,
  // h22/domains
  ...domainsClientProcedures,
  ...ssoClientProcedures,
});
