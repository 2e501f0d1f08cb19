import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { createPortalLinkForClient } from '../admin-portal/service.ts';

/** WIDGETS-API.md §2, row 19: "Add domain" and "Manage" open a portal link. */
export const adminPortalWidgetProcedures = {
  generateAdminPortalLink: clientProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/_widgets/admin-portal/generate-link',
        tags: ['Widgets'],
        summary: "A single-use admin portal link for the caller's organization",
      },
      successStatus: 201,
      queryInput: true,
    })
    .input(z.object({ intent: z.string().max(64) }))
    .output(z.object({ link: z.string() }))
    .mutation(async ({ ctx, input }) => ({ link: (await createPortalLinkForClient(ctx.scope, input.intent)).link })),
};
