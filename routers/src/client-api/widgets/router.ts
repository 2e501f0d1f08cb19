import { router } from '../../trpc.ts';
import { accountWidgetProcedures } from './account.ts';
import { adminPortalWidgetProcedures } from './admin-portal.ts';
import { apiKeysWidgetProcedures } from './api-keys.ts';
import { directorySyncWidgetProcedures } from './directory-sync.ts';
import { domainsWidgetProcedures } from './domains.ts';
import { membersWidgetProcedures } from './members.ts';
import { organizationsWidgetProcedures } from './organizations.ts';
import { profileWidgetProcedures } from './profile.ts';
import { sessionsWidgetProcedures } from './sessions.ts';
import { settingsWidgetProcedures } from './settings.ts';
import { ssoWidgetProcedures } from './sso.ts';

/**
 * `/_widgets/…`: the REST API the official WorkOS Widgets call, with their exact paths and
 * shapes (WIDGETS-API.md §2.1 rows), authorized by client and widget tokens (`clientProcedure`).
 * Object.assign, not spreads (tests/src/patches/v8-promotion.test.ts); its typings take three
 * sources at most, hence the nesting.
 */
export const widgetsRouter = router(
  Object.assign(
    Object.assign({}, organizationsWidgetProcedures, membersWidgetProcedures, sessionsWidgetProcedures), // rows 1-12
    Object.assign({}, profileWidgetProcedures, domainsWidgetProcedures, ssoWidgetProcedures), // rows 13-18
    Object.assign({}, adminPortalWidgetProcedures, settingsWidgetProcedures), // rows 19-20
    Object.assign(
      {},
      accountWidgetProcedures, // UserProfile's "Edit email", UserSecurity's "Change password"
      directorySyncWidgetProcedures, // DirectorySync (issue #36)
      apiKeysWidgetProcedures, // ApiKeys and UserApiKeys (issue #38)
    ),
  ),
);
