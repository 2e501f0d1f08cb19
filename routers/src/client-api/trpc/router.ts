import { clientProcedure, router } from '../../trpc.ts';
import { accountClientProcedures } from './account.ts';
import { adminPortalClientProcedures } from './admin-portal.ts';
import { domainsClientProcedures } from './domains.ts';
import { membersClientProcedures } from './members.ts';
import { organizationsClientProcedures } from './organizations.ts';
import { profileClientProcedures } from './profile.ts';
import { sessionsClientProcedures } from './sessions.ts';
import { ssoClientProcedures } from './sso.ts';

/**
 * `client.*` over `/trpc`: typed tRPC for TypeScript frontends, the operations and shapes of
 * `/client/graphql`, whose resolvers run these procedures from a per-process table (graphql/caller.ts).
 * Authorized by client and widget tokens (`clientProcedure`), confined to the token's
 * organization and user.
 */
export const clientRouter = router({
  status: clientProcedure.query(() => 'ok' as const),
  organizations: organizationsClientProcedures.organizations,
  organization: organizationsClientProcedures.organization,
  branding: organizationsClientProcedures.branding,
  authkitSettings: organizationsClientProcedures.authkitSettings,
  authenticationSettings: organizationsClientProcedures.authenticationSettings,
  me: profileClientProcedures.me,
  user: profileClientProcedures.user,
  passwordSet: profileClientProcedures.passwordSet,
  updateProfile: profileClientProcedures.updateProfile,
  account: router(accountClientProcedures),
  sessions: sessionsClientProcedures.sessions,
  members: router(membersClientProcedures),
  domains: domainsClientProcedures.domains,
  sso: ssoClientProcedures.sso,
  adminPortal: router(adminPortalClientProcedures),
});
