import { apiProcedure, router } from '../trpc.ts';
import { ListSessionsInput, RevokeSessionInput, Session, SessionList } from './schemas.ts';
import { listSessions, revokeSession } from './service.ts';

const tags = ['Sessions'];

export const sessionsRouter = router({
  list: apiProcedure
    .meta({
      openapi: { method: 'GET', path: '/user_management/users/{id}/sessions', tags, summary: "List a user's sessions" },
    })
    .input(ListSessionsInput)
    .output(SessionList)
    .query(({ ctx, input }) => listSessions(ctx.scope, input)),

  revoke: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/user_management/sessions/revoke',
        tags,
        summary: 'Revoke a session and every token bound to it',
      },
    })
    .input(RevokeSessionInput)
    .output(Session)
    .mutation(async ({ ctx, input }) => (await revokeSession(ctx.scope, input.session_id)).session),
});
