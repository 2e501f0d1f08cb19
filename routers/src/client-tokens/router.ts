import { apiProcedure, router } from '../trpc.ts';
import { ClientToken, CreateClientTokenInput, CreateWidgetTokenInput } from './schemas.ts';
import { createClientToken, createWidgetToken } from './service.ts';

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
  createWidgetToken: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/widgets/token',
        tags: ['Client tokens'],
        summary: 'Issue a widget token: a client token carrying the widget scopes asked for',
      },
      successStatus: 201,
    })
    .input(CreateWidgetTokenInput)
    .output(ClientToken)
    .mutation(({ ctx, input }) => createWidgetToken(ctx.scope, input)),
});
