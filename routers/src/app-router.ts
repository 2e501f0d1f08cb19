import { adminRouter } from './admin/router.ts';
import { agentsRouter } from './agents/router.ts';
import { auditLogsRouter } from './audit-logs/router.ts';
import { clientRouter } from './client-api/trpc/router.ts';
import { widgetsRouter } from './client-api/widgets/router.ts';
import { clientTokensRouter } from './client-tokens/router.ts';
import { connectionsRouter } from './connections/router.ts';
import { directoriesRouter } from './directories/router.ts';
import { onEnvironmentCreated } from './environments/reactions.ts';
import { eventsRouter } from './events/router.ts';
import { groupsRouter } from './groups/router.ts';
import { invitationsRouter } from './invitations/router.ts';
import { itContactsRouter } from './it-contacts/router.ts';
import { organizationApiKeysRouter, userApiKeysRouter } from './organization-api-keys/router.ts';
import { revokeApiKeysOfMemberships, revokeApiKeysOfUser } from './organization-api-keys/service.ts';
import { organizationDomainsRouter } from './organization-domains/router.ts';
import { registerDomainCounter } from './organization-domains/store.ts';
import { onMembershipsDeleted, onMembershipsEnded } from './organization-memberships/reactions.ts';
import { organizationMembershipsRouter } from './organization-memberships/router.ts';
import { recordMembershipsOfDeletedUser } from './organization-memberships/service.ts';
import { userIdsOfOrganization } from './organization-memberships/store.ts';
import { organizationsRouter } from './organizations/router.ts';
import { domainCounter } from './organizations/store.ts';
import { onPermissionDeleting } from './permissions/reactions.ts';
import { permissionsRouter } from './permissions/router.ts';
import { portalRouter } from './portal/router.ts';
import { rolesRouter } from './roles/router.ts';
import { rolesLosingPermission, seedDefaultRoles } from './roles/service.ts';
import { sessionsRouter } from './sessions/router.ts';
import { endSessionsOfStoppedMemberships } from './sessions/service.ts';
import { jwksRouter } from './signing/router.ts';
import { redirectUrisRouter, ssoRouter } from './sso/router.ts';
import { createCallerFactory, router } from './trpc.ts';
import { onUserDeleting, readOrganizationUsersWith } from './users/reactions.ts';
import { usersRouter } from './users/router.ts';
import { webhookEndpointsRouter } from './webhooks/router.ts';

// What memberships' changes do to other resources, in their transaction (the memberships import
// neither: both read memberships). A deletion revokes the API keys held under it (api_key.revoked);
// a deactivation or deletion ends the user's live sessions in that organization (session.revoked).
onMembershipsDeleted(revokeApiKeysOfMemberships);
onMembershipsEnded(endSessionsOfStoppedMemberships);
// A permission's deletion takes it from the roles holding it: each records role.updated.
onPermissionDeleting(rolesLosingPermission);
// What a user's deletion does first, in its transaction, and where the users list finds an
// organization's users (users/ imports neither: both read users). In this order: the user's API
// keys are revoked (api_key.revoked), then each membership's deletion is recorded.
// A new environment starts with its default roles and system permissions (environments/ sits below roles/).
onEnvironmentCreated(seedDefaultRoles);
onUserDeleting(revokeApiKeysOfUser);
onUserDeleting(recordMembershipsOfDeletedUser);
readOrganizationUsersWith(userIdsOfOrganization);
// An organization's domain count lives on its row: the domains' writes keep it through the
// organizations store's counter (the domains folder cannot import organizations, which reads it).
registerDomainCounter(domainCounter);

/** Every procedure of the service. Resources with REST paths carry `meta.openapi`. */
export const appRouter = router({
  organizations: organizationsRouter,
  organizationDomains: organizationDomainsRouter,
  users: usersRouter,
  sessions: sessionsRouter,
  organizationMemberships: organizationMembershipsRouter,
  invitations: invitationsRouter,
  groups: groupsRouter,
  roles: rolesRouter,
  permissions: permissionsRouter,
  agents: agentsRouter,
  clientTokens: clientTokensRouter,
  jwks: jwksRouter,
  connections: connectionsRouter,
  directories: directoriesRouter,
  itContacts: itContactsRouter,
  organizationApiKeys: organizationApiKeysRouter,
  userApiKeys: userApiKeysRouter,
  auditLogs: auditLogsRouter,
  events: eventsRouter,
  webhookEndpoints: webhookEndpointsRouter,
  admin: adminRouter,
  client: clientRouter,
  widgets: widgetsRouter,
  portal: portalRouter,
  sso: ssoRouter,
  redirectUris: redirectUrisRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
