import { z } from 'zod';
import { Id, ListParams, listOf, StrictBoolean, Timestamp } from '../common/schemas.ts';

// The wire shapes of single sign-on: redirect URIs, the profile and token, logout.

/** Upstream's `RedirectUri` object (`POST /user_management/redirect_uris`). */
export const RedirectUri = z
  .object({
    object: z.literal('redirect_uri'),
    id: z.string(),
    uri: z.string(),
    default: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'RedirectUri' });
export type RedirectUri = z.infer<typeof RedirectUri>;
export const RedirectUriList = listOf(RedirectUri);

export const CreateRedirectUriInput = z.object({
  uri: z.string().min(1).max(2048),
  default: StrictBoolean.optional(),
});
export const ListRedirectUrisInput = ListParams;

const SlimRole = z.object({ slug: z.string() });

/** Upstream's `Profile`: optional fields absent, never null, where upstream makes them optional. */
export const Profile = z
  .object({
    object: z.literal('profile'),
    id: z.string(),
    idp_id: z.string(),
    organization_id: z.string().nullable(),
    connection_id: z.string(),
    connection_type: z.string(),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    name: z.string().nullable(),
    role: SlimRole.optional(),
    roles: z.array(SlimRole).optional(),
    groups: z.array(z.string()).optional(),
    custom_attributes: z.record(z.string(), z.unknown()).optional(),
    raw_attributes: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Profile' });
export type Profile = z.infer<typeof Profile>;

/** `POST /sso/token` (form-encoded by the SDK): the API key is the client secret. */
export const TokenInput = z.object({
  client_id: z.string().max(128).optional(),
  client_secret: z.string().max(512).optional(),
  grant_type: z.string().max(64).optional(),
  code: z.string().max(256).optional(),
  /** PKCE (RFC 7636): the verifier of the authorization's `code_challenge`; a public client sends no secret. */
  code_verifier: z.string().max(256).optional(),
});

export const ProfileAndToken = z
  .object({
    token_type: z.literal('Bearer'),
    access_token: z.string(),
    expires_in: z.number().int(),
    profile: Profile,
  })
  .meta({ id: 'SsoTokenResponse' });

export const ProfileInput = z.object({ access_token: z.string().max(512) });

export const LogoutAuthorizeInput = z.object({ profile_id: Id });
export const LogoutAuthorization = z.object({ logout_url: z.string(), logout_token: z.string() });

/** `GET /sso/authorize`'s query (strings as the browser sends them). */
export const AuthorizeInput = z.object({
  client_id: z.string().max(128).optional(),
  response_type: z.string().max(64).optional(),
  redirect_uri: z.string().max(2048).optional(),
  connection: z.string().max(128).optional(),
  organization: z.string().max(128).optional(),
  provider: z.string().max(64).optional(),
  state: z.string().max(2048).optional(),
  login_hint: z.string().max(320).optional(),
  domain_hint: z.string().max(253).optional(),
  /** PKCE (the SDK's `getAuthorizationUrlWithPKCE`): the S256 challenge and its method. */
  code_challenge: z.string().max(256).optional(),
  code_challenge_method: z.string().max(16).optional(),
});

/** Where a browser step sends the browser next (302), or the refusal it shows (an HTML page). */
export const BrowserOutcome = z.object({
  redirect: z.string().optional(),
  error: z.object({ reason: z.string(), message: z.string() }).optional(),
});
export type BrowserOutcome = z.infer<typeof BrowserOutcome>;

export const SamlAcsInput = z.object({
  connection_id: z.string().max(128),
  SAMLResponse: z.string().max(512 * 1024),
  RelayState: z.string().max(512).optional(),
});
export const OidcCallbackInput = z.object({
  connection_id: z.string().max(128),
  /** The callback URL as the browser requested it (the query carries code, state or error). */
  url: z.string().max(8192),
});
export const ConnectionRefInput = z.object({ connection_id: z.string().max(128) });
export const LogoutInput = z.object({ token: z.string().max(1024).optional() });
