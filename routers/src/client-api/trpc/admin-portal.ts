import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { ClientIntent, createClientPortalLink } from '../admin-portal/service.ts';

/** `client.adminPortal.createLink`: GraphQL's `createAdminPortalLink`. */
export const adminPortalClientProcedures = {
  createLink: clientProcedure
    .input(z.object({ intent: ClientIntent }))
    .output(z.object({ link: z.string(), intent: ClientIntent, expiresAt: z.string() }))
    .mutation(({ ctx, input }) => createClientPortalLink(ctx.scope, input.intent)),
};
