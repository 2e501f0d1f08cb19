import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure, router } from '../../trpc.ts';
import {
  createSsoConnection,
  deleteSsoConnection,
  getSsoConnection,
  listSsoConnections,
  SSO_TYPE_NAMES,
  type SsoType,
  updateSsoConnection,
} from '../sso/service.ts';

const ClientConnection = z.object({
  id: z.string(),
  name: z.string(),
  organizationId: z.string(),
  type: z.enum(SSO_TYPE_NAMES as [SsoType, ...SsoType[]]),
  state: z.enum(['Active', 'Inactive']),
  setupComplete: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const ConnectionId = z.object({ id: Id });

/** `client.sso.*`, the operations and shapes of GraphQL. */
export const ssoClientProcedures = {
  sso: router({
    list: clientProcedure.output(z.array(ClientConnection)).query(({ ctx }) => listSsoConnections(ctx.scope)),
    get: clientProcedure
      .input(ConnectionId)
      .output(ClientConnection)
      .query(({ ctx, input }) => getSsoConnection(ctx.scope, input.id)),
    create: clientProcedure
      .input(z.object({ type: z.string().min(1).max(64), name: z.string().nullish() }))
      .output(ClientConnection)
      .mutation(({ ctx, input }) => createSsoConnection(ctx.scope, input)),
    update: clientProcedure
      .input(z.object({ id: Id, name: z.string().nullish() }))
      .output(ClientConnection)
      .mutation(({ ctx, input }) => updateSsoConnection(ctx.scope, input)),
    delete: clientProcedure
      .input(ConnectionId)
      .output(z.object({ id: z.string() }))
      .mutation(async ({ ctx, input }) => ({ id: await deleteSsoConnection(ctx.scope, input.id) })),
  }),
};
