import { z } from 'zod';
import {
  createApiKey,
  createEnvironment,
  KNOWN_FLAGS,
  listApiKeys,
  listEnvironments,
  revokeApiKeys,
  scopeForEnvironment,
  setFlag,
} from '../environments/service.ts';
import { environmentOfDomain, verifyOrganizationDomainManually } from '../organization-domains/service.ts';
import { adminProcedure, router } from '../trpc.ts';
import { CreateWebhookEndpointInput } from '../webhooks/schemas.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
} from '../webhooks/service.ts';

const EnvironmentRef = z.string().min(1).max(128);

/**
 * The admin surface: reachable over tRPC at /trpc with an admin token, never on the REST
 * facade (no OpenAPI metadata). The CLI is its typed client.
 */
export const adminRouter = router({
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
      .input(z.object({ environment: EnvironmentRef, key_prefix: z.string().min(8).max(64) }))
      .mutation(({ ctx, input }) => revokeApiKeys(ctx.deps, input)),
  }),
  flags: router({
    set: adminProcedure
      .input(z.object({ environment: EnvironmentRef, flag: z.string().min(1).max(64), enabled: z.boolean() }))
      .mutation(({ ctx, input }) => setFlag(ctx.deps, input)),
  }),
  domains: router({
    /** The specification's "manual verification in the admin console". */
    verifyManually: adminProcedure
      .input(z.object({ domain_id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeForEnvironment(ctx.deps, await environmentOfDomain(ctx.deps.db, input.domain_id));
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
        const scope = await scopeForEnvironment(ctx.deps, input.environment);
        return createWebhookEndpoint(scope, { endpoint_url: input.url, events: input.events ?? ['*'] });
      }),
    list: adminProcedure.input(z.object({ environment: EnvironmentRef })).query(async ({ ctx, input }) => {
      const scope = await scopeForEnvironment(ctx.deps, input.environment);
      const all = [];
      let after: string | undefined;
      do {
        const page = await listWebhookEndpoints(scope, { limit: 100, order: 'asc', after });
        all.push(...page.data.map(({ secret: _secret, ...rest }) => rest));
        after = page.list_metadata.after ?? undefined;
      } while (after);
      return all;
    }),
    disable: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeForEnvironment(ctx.deps, input.environment);
        const { secret: _secret, ...rest } = await updateWebhookEndpoint(scope, { id: input.id, status: 'disabled' });
        return rest;
      }),
    delete: adminProcedure
      .input(z.object({ environment: EnvironmentRef, id: z.string().min(1).max(128) }))
      .mutation(async ({ ctx, input }) => {
        const scope = await scopeForEnvironment(ctx.deps, input.environment);
        await deleteWebhookEndpoint(scope, input.id);
        return { id: input.id, deleted: true };
      }),
  }),
});
