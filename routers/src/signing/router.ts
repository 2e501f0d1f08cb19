import { publicProcedure, router } from '../trpc.ts';
import { Jwks, JwksInput } from './schemas.ts';
import { jwksOfClient } from './service.ts';

export const jwksRouter = router({
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sso/jwks/{clientId}',
        tags: ['JWKS'],
        summary: "Get the JSON Web Key Set of a client's environment",
        protect: false,
      },
    })
    .input(JwksInput)
    .output(Jwks)
    .query(async ({ ctx, input }) => {
      const { body, etag } = await jwksOfClient(ctx.deps, input.clientId);
      ctx.resHeaders.set('Cache-Control', 'public, max-age=300');
      ctx.resHeaders.set('ETag', etag);
      return body;
    }),
});
