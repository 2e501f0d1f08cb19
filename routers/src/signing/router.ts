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
    // On the REST facade this path is answered from memory ahead of the bridge, with
    // Cache-Control and an ETag (rest-facade/src/app.ts, serveJwks); tRPC callers get the body.
    .query(async ({ ctx, input }) => (await jwksOfClient(ctx.deps, input.clientId)).body),
});
