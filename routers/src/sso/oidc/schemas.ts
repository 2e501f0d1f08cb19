import { z } from 'zod';

/** A claim name (or a dotted path into nested claims, such as `address.country`). */
const ClaimName = z.string().trim().min(1).max(256);

/**
 * How the provider's claims become profile fields. Each value names the claim that carries the
 * field; unset fields take `DEFAULT_CLAIM_MAPPING`. `custom` maps a custom attribute to its claim.
 */
export const OidcClaimMapping = z.object({
  idp_id: ClaimName.optional(),
  email: ClaimName.optional(),
  first_name: ClaimName.optional(),
  last_name: ClaimName.optional(),
  name: ClaimName.optional(),
  groups: ClaimName.optional(),
  custom: z.record(z.string().trim().min(1).max(256), ClaimName).optional(),
});
export type OidcClaimMapping = z.infer<typeof OidcClaimMapping>;

/** The claims OpenID Connect names for each profile field. */
export const DEFAULT_CLAIM_MAPPING = {
  idp_id: 'sub',
  email: 'email',
  first_name: 'given_name',
  last_name: 'family_name',
  name: 'name',
  groups: 'groups',
} as const;

/** The scopes a connection asks for when none are configured (`openid` is always asked for). */
export const DEFAULT_SCOPES = ['openid', 'profile', 'email'];

const Scope = z
  .string()
  .trim()
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'A scope is printable ASCII without spaces, quotes or backslashes.')
  .max(256);

/** An OpenID Connect connection's configuration (CLI, console, portal, or the core's API). */
export const OidcConfigInput = z.object({
  /** The issuer (`https://idp.example.com`) or its discovery document (`.../.well-known/openid-configuration`). */
  discovery_endpoint: z.string().trim().min(1).max(2048),
  client_id: z.string().trim().min(1).max(512),
  /** Unset: a public client (PKCE only). Set: sealed under the master key, never returned. */
  client_secret: z.string().min(1).max(4096).optional(),
  scopes: z.array(Scope).max(50).optional(),
  claim_mapping: OidcClaimMapping.optional(),
});
export type OidcConfigInput = z.input<typeof OidcConfigInput>;
