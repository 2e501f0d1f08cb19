import { CONNECTION_TYPES } from '@atrium/db';
import { z } from 'zod';
import { registerAgent, revokeAgentRegistration } from '../agents/service.ts';
import { createAdminToken, listAdminTokens, revokeAdminToken } from '../auth/admin-token.ts';
import { CreateConnectionInput, ListConnectionsInput } from '../connections/schemas.ts';
import {
  deleteConnection,
  environmentOfConnection,
  listConnections,
  setConnectionState,
} from '../connections/service.ts';
import { environmentOfDirectory, environmentOfDirectoryGroup, roleSlugsOfGroups } from '../directories/group-roles.ts';
import { setDirectoryGroupRole } from '../directories/roles-mapping.ts';
import { CreateDirectoryInput, ListDirectoriesInput } from '../directories/schemas.ts';
import {
  createDirectory,
  deactivateDirectory,
  deleteDirectory,
  listDirectories,
  listDirectoryGroups,
  rotateDirectoryToken,
} from '../directories/service.ts';
import {
  createApiKey,
  createEnvironment,
  KNOWN_FLAGS,
  listApiKeys,
  listEnvironments,
  resolveEnvironment,
  revokeApiKey,
  setFlag,
} from '../environments/service.ts';
import { toOrganizationDomain } from '../organization-domains/claims.ts';
import { CreateOrganizationDomainInput } from '../organization-domains/schemas.ts';
import { createOrganizationDomain } from '../organization-domains/service.ts';
import { listSigningKeys, rotateSigningKey } from '../signing/service.ts';
import { OidcConfigInput } from '../sso/oidc/schemas.ts';
import { createRedirectUri, deleteRedirectUri, listRedirectUris, setDefaultRedirectUri } from '../sso/redirect-uris.ts';
import { SamlConfigInput } from '../sso/saml/config.ts';
import { CreateRedirectUriInput, ListRedirectUrisInput } from '../sso/schemas.ts';
import { configureOidc, configureSaml, createConfiguredConnection, getConnectionSetup } from '../sso/setup.ts';
import { adminProcedure, router } from '../trpc.ts';
import { CreateWebhookEndpointInput } from '../webhooks/schemas.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listAllWebhookEndpoints,
  updateWebhookEndpoint,
} from '../webhooks/service.ts';
import { consoleRouters } from './console-router.ts';
import {
  adminScope,
  domainWithHistory,
  recordAdminEvent,
  resendWebhookDelivery,
  verifyDomainWithReason,
  webhookDeliveryLog,
} from './service.ts';

const EnvironmentRef = z.string().min(1).max(128);
const Id = z.string().min(1).max(128);
/** Why an operator verified a domain by hand: required, recorded on the event. */
const Reason = z.string().trim().min(3, 'reason is required (at least 3 characters)').max(500);

/**
 * The admin surface: reachable over tRPC at /trpc with an admin token, never on the REST
 * facade (no OpenAPI metadata). The CLI is its typed client.
 */
export const adminRouter = router({
  adminTokens: router({
    create: adminProcedure.mutation(({ ctx }) => createAdminToken(ctx.deps)),
    list: adminProcedure.query(({ ctx }) => listAdminTokens(ctx.deps, ctx.adminTokenId)),
    revoke: adminProcedure
      .input(z.object({ id: Id }))
      .mutation(({ ctx, input }) => revokeAdminToken(ctx.deps, input.id, ctx.adminTokenId)),
  }),
  environments: router({
    create: adminProcedure
      .input(
        z.object({
          name: z.string().trim().min(1).max(128),
          flags: z.partialRecord(z.enum(KNOWN_FLAGS), z.boolean()).optional(),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        const created = await createEnvironment(ctx.deps, input);
        const { environment_id: id, client_id } = created;
        await recordAdminEvent(ctx.deps, id, 'environment.created', { id, name: input.name, client_id });
        return created;
      }),
    list: adminProcedure.query(({ ctx }) => listEnvironments(ctx.deps)),
  }),
  apiKeys: router({
    create: adminProcedure
      .input(z.object({ environment: EnvironmentRef, live: z.boolean().optional() }))
      .mutation(async ({ ctx, input }) => {
        const created = await createApiKey(ctx.deps, input);
        await recordAdminEvent(ctx.deps, created.environment_id, 'api_key.created', { key_prefix: created.key_prefix });
        return created;
      }),
    list: adminProcedure
      .input(z.object({ environment: EnvironmentRef }))
      .query(({ ctx, input }) => listApiKeys(ctx.deps, input)),
    revoke: adminProcedure
      .input(
        z.object({ environment: EnvironmentRef, id: Id.optional(), key_prefix: z.string().min(1).max(64).optional() }),
      )
      .mutation(async ({ ctx, input }) => {
        const { environment_id, ...revoked } = await revokeApiKey(ctx.deps, input);
        await recordAdminEvent(ctx.deps, environment_id, 'api_key.revoked', revoked);
        return { environment_id, ...revoked };
      }),
  }),
  flags: router({
    set: adminProcedure
      .input(z.object({ environment: EnvironmentRef, flag: z.string().min(1).max(64), enabled: z.boolean() }))
      .mutation(async ({ ctx, input }) => {
        const set = await setFlag(ctx.deps, input);
        const data = { flag: input.flag, enabled: input.enabled, flags: set.flags };
        await recordAdminEvent(ctx.deps, set.environment_id, 'environment.flag_updated', data);
        return set;
      }),
  }),
  signingKeys: router({
    list: adminProcedure
      .input(z.object({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) =>
        listSigningKeys(ctx.deps, (await resolveEnvironment(ctx.deps.db, input.environment)).id),
      ),
    rotate: adminProcedure
      .input(
        z.object({
          environment: EnvironmentRef,
          /** Seconds before the new key signs (default: the server's rotation delay). */
          activate_after_seconds: z.number().int().min(0).max(86_400).optional(),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        const env = await resolveEnvironment(ctx.deps.db, input.environment);
        const delay = input.activate_after_seconds === undefined ? undefined : input.activate_after_seconds * 1000;
        const rotated = await rotateSigningKey(ctx.deps, env.id, delay);
        await recordAdminEvent(ctx.deps, env.id, 'signing_key.rotated', {
          kid: rotated.kid,
          active_from: rotated.active_from,
        });
        return rotated;
      }),
  }),
  agents: router({
    register: adminProcedure
      .input(z.object({ environment: EnvironmentRef, organization_id: Id, userland_user_id: Id.optional() }))
      .mutation(async ({ ctx, input }) => registerAgent(await adminScope(ctx.deps, input.environment), input)),
    revoke: adminProcedure
      .input(z.object({ registration_id: Id }))
      .mutation(({ ctx, input }) => revokeAgentRegistration(ctx.deps, input.registration_id)),
  }),
  /** An environment's redirect URIs (`npx atrium redirect-uris add|list|remove|set-default`). */
  redirectUris: router({
    create: adminProcedure
      .input(CreateRedirectUriInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) => createRedirectUri(await adminScope(ctx.deps, input.environment), input)),
    list: adminProcedure
      .input(ListRedirectUrisInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listRedirectUris(await adminScope(ctx.deps, input.environment), input)),
    setDefault: adminProcedure
      .input(z.object({ environment: EnvironmentRef, uri: z.string().min(1).max(2048), default: z.boolean() }))
      .mutation(async ({ ctx, input }) =>
        setDefaultRedirectUri(await adminScope(ctx.deps, input.environment), input.uri, input.default),
      ),
    delete: adminProcedure
      .input(z.object({ environment: EnvironmentRef, uri: z.string().min(1).max(2048) }))
      .mutation(async ({ ctx, input }) => deleteRedirectUri(await adminScope(ctx.deps, input.environment), input.uri)),
  }),
  connections: router({
    /** A connection, configured at once when `saml` or `oidc` is given; with its SP facts. */
    create: adminProcedure
      .input(
        CreateConnectionInput.extend({
          environment: EnvironmentRef,
          saml: SamlConfigInput.optional(),
          oidc: OidcConfigInput.optional(),
        }),
      )
      .mutation(async ({ ctx, input }) =>
        createConfiguredConnection(await adminScope(ctx.deps, input.environment), input),
      ),
    /** A connection with its SP facts (what the IT admin pastes into the identity provider). */
    get: adminProcedure
      .input(z.object({ connection_id: Id }))
      .query(async ({ ctx, input }) =>
        getConnectionSetup(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
        ),
      ),
    /** SAML: the IdP metadata (XML or URL), certificates, signed requests, IdP-initiated sign-in. */
    configureSaml: adminProcedure
      .input(SamlConfigInput.extend({ connection_id: Id }))
      .mutation(async ({ ctx, input }) => {
        const { connection_id, ...config } = input;
        return configureSaml(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, connection_id)),
          connection_id,
          config,
        );
      }),
    /** OpenID Connect: the discovery endpoint, client id and secret (sealed, never returned), scopes. */
    configureOidc: adminProcedure
      .input(OidcConfigInput.extend({ connection_id: Id }))
      .mutation(async ({ ctx, input }) => {
        const { connection_id, ...config } = input;
        return configureOidc(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, connection_id)),
          connection_id,
          config,
        );
      }),
    activate: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        setConnectionState(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
          'active',
        ),
      ),
    deactivate: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        setConnectionState(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
          'inactive',
        ),
      ),
    delete: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        deleteConnection(
          await adminScope(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
        ),
      ),
    types: adminProcedure.query(() => [...CONNECTION_TYPES]),
    list: adminProcedure
      .input(ListConnectionsInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listConnections(await adminScope(ctx.deps, input.environment), input)),
  }),
  directories: router({
    /** A directory of an organization: its SCIM base URL and bearer token, shown this once. */
    create: adminProcedure
      .input(CreateDirectoryInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) => {
        const scope = await adminScope(ctx.deps, input.environment);
        const created = await createDirectory(scope, input);
        const { id, organization_id, type, name } = created;
        await recordAdminEvent(ctx.deps, scope.env.id, 'directory.created', { id, organization_id, type, name });
        return created;
      }),
    /** A new SCIM token (shown once); the old one stops working at once. */
    rotateToken: adminProcedure.input(z.object({ directory_id: Id })).mutation(async ({ ctx, input }) => {
      const scope = await adminScope(ctx.deps, await environmentOfDirectory(ctx.deps.db, input.directory_id));
      const rotated = await rotateDirectoryToken(scope, input.directory_id);
      const { id, organization_id } = rotated;
      await recordAdminEvent(ctx.deps, scope.env.id, 'directory.token_rotated', { id, organization_id });
      return rotated;
    }),
    /** Unlinks a directory (event `dsync.deactivated`): its token stops working; rotate-token links it again. */
    deactivate: adminProcedure
      .input(z.object({ directory_id: Id }))
      .mutation(async ({ ctx, input }) =>
        deactivateDirectory(
          await adminScope(ctx.deps, await environmentOfDirectory(ctx.deps.db, input.directory_id)),
          input.directory_id,
        ),
      ),
    delete: adminProcedure
      .input(z.object({ directory_id: Id }))
      .mutation(async ({ ctx, input }) =>
        deleteDirectory(
          await adminScope(ctx.deps, await environmentOfDirectory(ctx.deps.db, input.directory_id)),
          input.directory_id,
        ),
      ),
    list: adminProcedure
      .input(ListDirectoriesInput.extend({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listDirectories(await adminScope(ctx.deps, input.environment), input)),
    /** A directory's groups (the first 100, newest first), each with the role it maps to. */
    groups: adminProcedure.input(z.object({ directory_id: Id })).query(async ({ ctx, input }) => {
      const scope = await adminScope(ctx.deps, await environmentOfDirectory(ctx.deps.db, input.directory_id));
      const page = await listDirectoryGroups(scope, { directory: input.directory_id, limit: 100, order: 'desc' });
      const slugs = await roleSlugsOfGroups(
        scope.db,
        page.data.map((group) => group.id),
      );
      return page.data.map((group) => ({ ...group, role_slug: slugs.get(group.id) ?? null }));
    }),
    /** Maps a group to a role of the organization (members of the group get it), or to none. */
    mapGroup: adminProcedure
      .input(z.object({ group_id: Id, role_slug: z.string().min(1).max(64).nullable() }))
      .mutation(async ({ ctx, input }) => {
        const scope = await adminScope(ctx.deps, await environmentOfDirectoryGroup(ctx.deps.db, input.group_id));
        const { group } = await setDirectoryGroupRole(scope, input.group_id, input.role_slug);
        await recordAdminEvent(ctx.deps, scope.env.id, 'directory_group.role_mapped', {
          id: group.id,
          directory_id: group.directory_id,
          role_slug: input.role_slug,
        });
        return { ...group, role_slug: input.role_slug };
      }),
  }),
  domains: router({
    /** The specification's "manual verification in the admin console". */
    verifyManually: adminProcedure
      .input(z.object({ domain_id: Id, reason: Reason }))
      .mutation(({ ctx, input }) => verifyDomainWithReason(ctx.deps, input.domain_id, input.reason)),
    create: adminProcedure
      .input(CreateOrganizationDomainInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) =>
        createOrganizationDomain(await adminScope(ctx.deps, input.environment), input, toOrganizationDomain),
      ),
    /** The domain and every event about it, newest first (its verification history). */
    get: adminProcedure
      .input(z.object({ domain_id: Id }))
      .query(({ ctx, input }) => domainWithHistory(ctx.deps, input.domain_id)),
  }),
  webhooks: router({
    create: adminProcedure
      .input(
        z.object({
          environment: EnvironmentRef,
          url: z.string().min(1).max(2048),
          events: CreateWebhookEndpointInput.shape.events.optional(),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        const scope = await adminScope(ctx.deps, input.environment);
        const created = await createWebhookEndpoint(scope, { endpoint_url: input.url, events: input.events ?? ['*'] });
        const { secret: _secret, ...shown } = created;
        await recordAdminEvent(ctx.deps, scope.env.id, 'webhook_endpoint.created', shown);
        return created;
      }),
    list: adminProcedure
      .input(z.object({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listAllWebhookEndpoints(await adminScope(ctx.deps, input.environment))),
    disable: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await adminScope(ctx.deps, input.environment);
        const { secret: _secret, ...rest } = await updateWebhookEndpoint(scope, { id: input.id, status: 'disabled' });
        await recordAdminEvent(ctx.deps, scope.env.id, 'webhook_endpoint.disabled', rest);
        return rest;
      }),
    delete: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await adminScope(ctx.deps, input.environment);
        await deleteWebhookEndpoint(scope, input.id);
        await recordAdminEvent(ctx.deps, scope.env.id, 'webhook_endpoint.deleted', { id: input.id });
        return { id: input.id, deleted: true };
      }),
    deliveries: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: Id }))
      .query(async ({ ctx, input }) => webhookDeliveryLog(await adminScope(ctx.deps, input.environment), input.id)),
    resend: adminProcedure
      .input(z.object({ environment: EnvironmentRef, delivery_id: Id }))
      .mutation(async ({ ctx, input }) =>
        resendWebhookDelivery(await adminScope(ctx.deps, input.environment), input.delivery_id),
      ),
  }),
  ...consoleRouters,
});
