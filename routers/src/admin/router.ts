import { CONNECTION_TYPES } from '@atrium/db';
import { z } from 'zod';
import { registerAgent, revokeAgentRegistration } from '../agents/service.ts';
import { createAdminToken, listAdminTokens, revokeAdminToken } from '../auth/service.ts';
import { CreateConnectionInput } from '../connections/schemas.ts';
import {
  createConnection,
  deleteConnection,
  environmentOfConnection,
  setConnectionState,
} from '../connections/service.ts';
import {
  createApiKey,
  createEnvironment,
  KNOWN_FLAGS,
  listApiKeys,
  listEnvironments,
  resolveEnvironment,
  revokeApiKey,
  scopeOf,
  setFlag,
} from '../environments/service.ts';
import { environmentOfDomain, verifyOrganizationDomainManually } from '../organization-domains/service.ts';
import { listSigningKeys, rotateSigningKey } from '../signing/service.ts';
import { adminProcedure, router } from '../trpc.ts';
import { CreateWebhookEndpointInput } from '../webhooks/schemas.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listAllWebhookEndpoints,
  updateWebhookEndpoint,
} from '../webhooks/service.ts';

const EnvironmentRef = z.string().min(1).max(128);
const Id = z.string().min(1).max(128);

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
      .mutation(({ ctx, input }) => createEnvironment(ctx.deps, input)),
    list: adminProcedure.query(({ ctx }) => listEnvironments(ctx.deps)),
  }),
  apiKeys: router({
    create: adminProcedure
      .input(z.object({ environment: EnvironmentRef, live: z.boolean().optional() }))
      .mutation(({ ctx, input }) => createApiKey(ctx.deps, input)),
    list: adminProcedure
      .input(z.object({ environment: EnvironmentRef }))
      .query(({ ctx, input }) => listApiKeys(ctx.deps, input)),
    revoke: adminProcedure
      .input(
        z.object({ environment: EnvironmentRef, id: Id.optional(), key_prefix: z.string().min(1).max(64).optional() }),
      )
      .mutation(({ ctx, input }) => revokeApiKey(ctx.deps, input)),
  }),
  flags: router({
    set: adminProcedure
      .input(z.object({ environment: EnvironmentRef, flag: z.string().min(1).max(64), enabled: z.boolean() }))
      .mutation(({ ctx, input }) => setFlag(ctx.deps, input)),
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
        return rotateSigningKey(ctx.deps, env.id, delay);
      }),
  }),
  agents: router({
    register: adminProcedure
      .input(z.object({ environment: EnvironmentRef, organization_id: Id, userland_user_id: Id.optional() }))
      .mutation(async ({ ctx, input }) => registerAgent(await scopeOf(ctx.deps, input.environment), input)),
    revoke: adminProcedure
      .input(z.object({ registration_id: Id }))
      .mutation(({ ctx, input }) => revokeAgentRegistration(ctx.deps, input.registration_id)),
  }),
  connections: router({
    create: adminProcedure
      .input(CreateConnectionInput.extend({ environment: EnvironmentRef }))
      .mutation(async ({ ctx, input }) => createConnection(await scopeOf(ctx.deps, input.environment), input)),
    activate: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        setConnectionState(
          await scopeOf(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
          'active',
        ),
      ),
    deactivate: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        setConnectionState(
          await scopeOf(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
          'inactive',
        ),
      ),
    delete: adminProcedure
      .input(z.object({ connection_id: Id }))
      .mutation(async ({ ctx, input }) =>
        deleteConnection(
          await scopeOf(ctx.deps, await environmentOfConnection(ctx.deps.db, input.connection_id)),
          input.connection_id,
        ),
      ),
    types: adminProcedure.query(() => [...CONNECTION_TYPES]),
  }),
  domains: router({
    /** The specification's "manual verification in the admin console". */
    verifyManually: adminProcedure
      .input(z.object({ domain_id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeOf(ctx.deps, await environmentOfDomain(ctx.deps.db, input.domain_id));
        return verifyOrganizationDomainManually(scope, input.domain_id);
      }),
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
        const scope = await scopeOf(ctx.deps, input.environment);
        return createWebhookEndpoint(scope, { endpoint_url: input.url, events: input.events ?? ['*'] });
      }),
    list: adminProcedure
      .input(z.object({ environment: EnvironmentRef }))
      .query(async ({ ctx, input }) => listAllWebhookEndpoints(await scopeOf(ctx.deps, input.environment))),
    disable: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeOf(ctx.deps, input.environment);
        const { secret: _secret, ...rest } = await updateWebhookEndpoint(scope, { id: input.id, status: 'disabled' });
        return rest;
      }),
    delete: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeOf(ctx.deps, input.environment);
        await deleteWebhookEndpoint(scope, input.id);
        return { id: input.id, deleted: true };
      }),
  }),
});
