import { z } from 'zod';
import { bearer } from '../auth/bearer.ts';
import { apiProcedure, publicProcedure, router } from '../trpc.ts';
import { createRedirectUri } from './redirect-uris.ts';
import {
  AuthorizeInput,
  BrowserOutcome,
  ConnectionRefInput,
  CreateRedirectUriInput,
  LogoutAuthorization,
  LogoutAuthorizeInput,
  LogoutInput,
  OidcCallbackInput,
  Profile,
  ProfileAndToken,
  RedirectUri,
  SamlAcsInput,
  TokenInput,
} from './schemas.ts';
import {
  authorizeLogout,
  beginAuthorization,
  exchangeCode,
  logout,
  profileOfAccessToken,
  receiveOidcCallback,
  receiveSamlResponse,
  scopeOfClientId,
  spMetadataOf,
} from './service.ts';

const tags = ['SSO'];

/**
 * Single sign-on. The JSON operations with an API key or an access token are REST routes; the
 * browser's steps (authorize, the IdP's answers, logout) and the form-encoded `POST /sso/token`
 * go through the SSO codec (rest-facade/src/pipeline/sso.ts), which calls these procedures.
 */
export const ssoRouter = router({
  authorize: publicProcedure
    .input(AuthorizeInput)
    .output(z.object({ url: z.string() }))
    .query(async ({ ctx, input }) =>
      beginAuthorization(await scopeOfClientId(ctx.deps, input.client_id), input, ctx.device),
    ),

  token: publicProcedure
    .input(TokenInput)
    .output(ProfileAndToken)
    .mutation(({ ctx, input }) => exchangeCode(ctx.deps, input)),

  profile: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/sso/profile', tags, summary: 'Get a profile', protect: false } })
    .input(z.object({}))
    .output(Profile)
    .query(({ ctx }) => profileOfAccessToken(ctx.deps, bearer(ctx.authorization))),

  logoutAuthorize: apiProcedure
    .meta({ openapi: { method: 'POST', path: '/sso/logout/authorize', tags, summary: 'Authorize a logout' } })
    .input(LogoutAuthorizeInput)
    .output(LogoutAuthorization)
    .mutation(({ ctx, input }) => authorizeLogout(ctx.scope, input.profile_id)),

  logout: publicProcedure
    .input(LogoutInput)
    .output(BrowserOutcome)
    .query(({ ctx, input }) => logout(ctx.deps, input.token)),

  samlAcs: publicProcedure
    .input(SamlAcsInput)
    .output(BrowserOutcome)
    .mutation(({ ctx, input }) => receiveSamlResponse(ctx.deps, input, ctx.device)),

  oidcCallback: publicProcedure
    .input(OidcCallbackInput)
    .output(BrowserOutcome)
    .mutation(({ ctx, input }) => receiveOidcCallback(ctx.deps, input, ctx.device)),

  samlMetadata: publicProcedure
    .input(ConnectionRefInput)
    .output(z.string())
    .query(({ ctx, input }) => spMetadataOf(ctx.deps, input.connection_id)),
});

export const redirectUrisRouter = router({
  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/user_management/redirect_uris', tags, summary: 'Create a redirect URI' },
      successStatus: 201,
    })
    .input(CreateRedirectUriInput)
    .output(RedirectUri)
    .mutation(({ ctx, input }) => createRedirectUri(ctx.scope, input)),
});
