import { notFound } from '../../kernel/errors.ts';
import type { ClientScope } from '../../kernel/principals.ts';
import { getOrganizationSummary } from '../../organizations/service.ts';
import { PASSWORD_POLICY } from '../../users/schemas.ts';
import type { ClientOrganization } from './schemas.ts';

/**
 * The token's organization by id: GraphQL `organization(id)`, `client.organization`; any other id
 * is 404. Its own fields only (`ClientOrganization`), read without its domains.
 */
export async function getOwnOrganization(scope: ClientScope, id: string): Promise<ClientOrganization> {
  if (id !== scope.client.organizationId) throw notFound('organization', id);
  return getOrganizationSummary(scope, id);
}

/** What the widgets show of the deployment: the environment's name, the server's base URL (its tokens' issuer). */
export interface ClientSettings {
  teamName: string;
  authkitOrigin: string;
}

/** `GET /_widgets/settings`, GraphQL `branding` and `authkitSettings`: no logos are stored. */
export function clientSettings(scope: ClientScope): ClientSettings {
  return { teamName: scope.env.name, authkitOrigin: scope.deps.tokens.issuer.replace(/\/+$/, '') };
}

/**
 * How users of this deployment authenticate, as far as Atrium knows: it stores passwords (set
 * through the users API), and has no MFA or passkeys.
 */
export function authenticationSettings(_scope: ClientScope) {
  return {
    mfaEnabled: false,
    mfaRequired: false,
    passkeyAuthEnabled: false,
    passwordAuthEnabled: true,
    passwordPolicy: PASSWORD_POLICY,
  };
}
