import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure, router } from '../../trpc.ts';
import { ClientSession, toClientSession } from '../sessions/schemas.ts';
import { listOwnSessions, revokeOtherOwnSessions, revokeOwnSession } from '../sessions/service.ts';
import { declared } from '../variants.ts';

/** `client.sessions.*`, the same operations and shapes as GraphQL. */
export const sessionsClientProcedures = {
  sessions: router({
    list: clientProcedure
      .output(z.array(ClientSession))
      .query(async ({ ctx }) => (await listOwnSessions(ctx.scope)).map(toClientSession)),
    /** A session not the caller's is SessionNotFound. */
    revoke: clientProcedure
      .input(z.object({ sessionId: Id }))
      .output(
        z.discriminatedUnion('__typename', [
          z.object({ __typename: z.literal('SessionRevoked'), session: ClientSession }),
          z.object({ __typename: z.literal('SessionNotFound'), sessionId: z.string() }),
        ]),
      )
      .mutation(({ ctx, input }) =>
        declared('revokeSession', async () => ({
          __typename: 'SessionRevoked' as const,
          session: toClientSession(await revokeOwnSession(ctx.scope, input.sessionId)),
        })),
      ),
    /** Revokes all but the token's own session (its `sid`). */
    revokeAll: clientProcedure
      .output(z.object({ __typename: z.literal('AllSessionsRevoked'), success: z.boolean() }))
      .mutation(async ({ ctx }) => {
        await revokeOtherOwnSessions(ctx.scope, ctx.scope.client.sessionId);
        return { __typename: 'AllSessionsRevoked' as const, success: true };
      }),
  }),
};
