import { clientProcedure, router } from '../trpc.ts';
import { accountClientProcedures, accountWidgetProcedures } from './account/router.ts';
import { adminPortalClientProcedures, adminPortalWidgetProcedures } from './admin-portal/router.ts';
import { domainsClientProcedures, domainsWidgetProcedures } from './domains/router.ts';
import { membersClientProcedures, membersWidgetProcedures } from './members/router.ts';
import { organizationClientProcedures, organizationWidgetProcedures } from './organization/router.ts';
import { organizationsClientProcedures, organizationsWidgetProcedures } from './organizations/router.ts';
import { profileClientProcedures, profileWidgetProcedures } from './profile/router.ts';
import { sessionsClientProcedures, sessionsWidgetProcedures } from './sessions/router.ts';
import { ssoClientProcedures, ssoWidgetProcedures } from './sso/router.ts';

/**
 * The client surfaces' procedures, authorized by client and widget tokens (`clientProcedure`),
 * confined to the token's organization and user. Each area adds its procedures here.
 */

/**
 * `/_widgets/…`: the REST API the official WorkOS Widgets call, with their exact paths and
 * shapes (WIDGETS-API.md §2.1 rows). Object.assign, not spreads (tests/src/patches/v8-promotion.test.ts);
 * its typings take three sources at most, hence the nesting.
 */
export const widgetsRouter = router(
  Object.assign(
    Object.assign({}, organizationsWidgetProcedures, membersWidgetProcedures, sessionsWidgetProcedures), // rows 1-12
    Object.assign({}, profileWidgetProcedures, domainsWidgetProcedures, ssoWidgetProcedures), // rows 13-18
    Object.assign({}, adminPortalWidgetProcedures, organizationWidgetProcedures), // rows 19-20
    accountWidgetProcedures, // UserProfile's "Edit email", UserSecurity's "Change password"
  ),
);

/** `client.*` over `/trpc`: typed tRPC for TypeScript frontends, the operations of `/client/graphql`. */
export const clientRouter = router({
  status: clientProcedure.query(() => 'ok' as const),
  organizations: organizationsClientProcedures.organizations,
  organization: organizationClientProcedures.organization,
  me: profileClientProcedures.me,
  user: profileClientProcedures.user,
  updateProfile: profileClientProcedures.updateProfile,
  account: router(accountClientProcedures),
  sessions: sessionsClientProcedures.sessions,
  members: router(membersClientProcedures),
  domains: domainsClientProcedures.domains,
  sso: ssoClientProcedures.sso,
  adminPortal: router(adminPortalClientProcedures),
});
