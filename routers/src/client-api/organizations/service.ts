import { type ClientScope, requireUser } from '../../kernel/principals.ts';
import { listOrganizationMemberships } from '../../organization-memberships/service.ts';

/** One organization the caller belongs to, marked `current` when it is the token's. */
export interface UserOrganization {
  id: string;
  name: string;
  current: boolean;
}

/** The most organizations the switcher lists (a user's memberships are capped by a quota too). */
const MAX_LISTED = 100;

/**
 * The caller's organizations (active memberships), the token's first: the OrganizationSwitcher
 * widget (`GET /_widgets/UserManagement/organizations`), GraphQL `organizations`, `client.organizations`.
 */
export async function listUserOrganizations(scope: ClientScope): Promise<UserOrganization[]> {
  const page = await listOrganizationMemberships(scope, {
    user_id: requireUser(scope),
    statuses: ['active'],
    limit: MAX_LISTED,
    order: 'desc',
  });
  const current = scope.client.organizationId;
  const all = page.data.map((m) => ({
    id: m.organization_id,
    name: m.organization_name,
    current: m.organization_id === current,
  }));
  return [...all.filter((o) => o.current), ...all.filter((o) => !o.current)];
}
