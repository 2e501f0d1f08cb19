import { z } from 'zod';
import {
  createApiKey,
  createEnvironment,
  KNOWN_FLAGS,
  listApiKeys,
  listEnvironments,
  revokeApiKeys,
  setFlag,
} from '../environments/service.ts';
import { adminProcedure, router } from '../trpc.ts';

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
});
