import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { Me, toMe, UpdateMeInput } from '../profile/schemas.ts';
import { getMe, updateProfile } from '../profile/service.ts';

/** The UserProfile widget (WIDGETS-API.md §2.1 rows 13-14). */
export const profileWidgetProcedures = {
  me: clientProcedure
    .meta({ openapi: { method: 'GET', path: '/_widgets/UserProfile/me', tags: ['Widgets'], summary: 'The caller' } })
    .input(z.object({}))
    .output(Me)
    .query(async ({ ctx }) => toMe(await getMe(ctx.scope))),

  updateMe: clientProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/_widgets/UserProfile/me',
        tags: ['Widgets'],
        summary: "Update the caller's names and locale",
      },
    })
    .input(UpdateMeInput)
    .output(Me)
    .mutation(async ({ ctx, input }) => toMe(await updateProfile(ctx.scope, input))),
};
