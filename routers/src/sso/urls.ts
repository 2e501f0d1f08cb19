import type { Deps } from '../kernel/deps.ts';

// Where identity providers and browsers reach a connection on this server (the public base URL,
// `deps.tokens.issuer`). The CLI, the console, the portal and the metadata document all print these.

function base(deps: Deps): string {
  return deps.tokens.issuer.replace(/\/+$/, '');
}

/** SAML: the SP entity ID the IdP must put in the assertion's `Audience`. */
export function samlSpEntityId(deps: Deps, connectionId: string): string {
  return `${base(deps)}/sso/saml/${connectionId}`;
}

/** SAML: the Assertion Consumer Service the IdP POSTs its response to (`Recipient`, `Destination`). */
export function samlAcsUrl(deps: Deps, connectionId: string): string {
  return `${base(deps)}/sso/saml/acs/${connectionId}`;
}

/** SAML: the SP metadata document of the connection (public, XML). */
export function samlSpMetadataUrl(deps: Deps, connectionId: string): string {
  return `${base(deps)}/sso/saml/metadata/${connectionId}`;
}

/** OIDC: the redirect URI registered at the OpenID provider for the connection. */
export function oidcRedirectUri(deps: Deps, connectionId: string): string {
  return `${base(deps)}/sso/oidc/callback/${connectionId}`;
}
