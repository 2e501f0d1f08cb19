import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { ActiveSession, toActiveSession } from '../sessions/schemas.ts';
import { listOwnSessions, revokeOtherOwnSessions, revokeOwnSession } from '../sessions/service.ts';

const Success = z.object({ success: z.boolean() });
const widgetTags = ['Widgets'];

/** The UserSessions widget (WIDGETS-API.md §2.1 rows 10-12). */
export const sessionsWidgetProcedures = {
  sessions: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/UserProfile/sessions',
        tags: widgetTags,
        summary: "The caller's sessions",
      },
    })
    .input(z.object({}))
    .output(z.object({ data: z.array(ActiveSession) }))
    .query(async ({ ctx }) => ({ data: (await listOwnSessions(ctx.scope)).map(toActiveSession) })),

  revokeSession: clientProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/_widgets/UserProfile/sessions/revoke/{sessionId}',
        tags: widgetTags,
        summary: "Revoke one of the caller's sessions",
      },
    })
    .input(z.object({ sessionId: Id }))
    .output(Success)
    .mutation(async ({ ctx, input }) => {
      await revokeOwnSession(ctx.scope, input.sessionId);
      return { success: true };
    }),

  revokeAllSessions: clientProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/_widgets/UserProfile/sessions/revoke-all',
        tags: widgetTags,
        summary: "Revoke all the caller's sessions but the current one (JSON body on DELETE)",
      },
      bodyOnDelete: true,
    })
    .input(z.object({ currentSessionId: Id }))
    .output(Success)
    .mutation(async ({ ctx, input }) => {
      await revokeOtherOwnSessions(ctx.scope, input.currentSessionId);
      return { success: true };
    }),
};
