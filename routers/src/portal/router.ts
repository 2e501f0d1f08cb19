import { apiProcedure, router } from '../trpc.ts';
import { GeneratePortalLinkInput, PortalLink } from './schemas.ts';
import { generatePortalLink } from './service.ts';

export const portalRouter = router({
  generateLink: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/portal/generate_link',
        tags: ['Admin portal'],
        summary: 'Generate a single-use admin portal link for an organization',
      },
      successStatus: 201,
    })
    .input(GeneratePortalLinkInput)
    .output(PortalLink)
    .mutation(({ ctx, input }) => generatePortalLink(ctx.scope, input)),
});
