import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import { Connection, ConnectionIdInput, ConnectionList, ListConnectionsInput } from './schemas.ts';
import { deleteConnection, getConnection, listConnections } from './service.ts';

const tags = ['Connections'];

export const connectionsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/connections', tags, summary: 'List connections' } })
    .input(ListConnectionsInput)
    .output(ConnectionList)
    .query(({ ctx, input }) => listConnections(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/connections/{id}', tags, summary: 'Get a connection' } })
    .input(ConnectionIdInput)
    .output(Connection)
    .query(({ ctx, input }) => getConnection(ctx.scope, input.id)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/connections/{id}', tags, summary: 'Delete a connection' },
      successStatus: 204,
    })
    .input(ConnectionIdInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteConnection(ctx.scope, input.id);
    }),
});
