import { apiProcedure, router } from '../trpc.ts';
import { ClientToken, CreateClientTokenInput } from './schemas.ts';
import { createClientToken } from './service.ts';

export const clientTokensRouter = router({
  create: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/client/token',
        tags: ['Client tokens'],
        summary: 'Issue a short-lived, session-bound client token',
      },
      successStatus: 201,
    })
    .input(CreateClientTokenInput)
    .output(ClientToken)
    .mutation(({ ctx, input }) => createClientToken(ctx.scope, input)),
});
