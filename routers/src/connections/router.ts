import { apiProcedure, router } from '../trpc.ts';
import { ConnectionList, ListConnectionsInput } from './schemas.ts';
import { listConnections } from './service.ts';

export const connectionsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/connections', tags: ['Connections'], summary: 'List connections' } })
    .input(ListConnectionsInput)
    .output(ConnectionList)
    .query(({ ctx, input }) => listConnections(ctx.scope, input)),
});
