import { type DirectoryOverview, organizationDirectories, organizationDirectory } from '../../directories/overview.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import { createPortalLinkForClient } from '../admin-portal/service.ts';

/** The DirectorySync widget's scope (WIDGETS-API.md §3); an admin-portal dsync session holds it too. */
const PERMISSION = 'widgets:dsync:manage';

/** `Directory` of `@workos-inc/widgets` 1.18 (`api/endpoint.d.ts`): camelCase, counts in `metadata`. */
export interface WidgetDirectory {
  id: string;
  name: string;
  type: DirectoryOverview['directory']['type'];
  state: DirectoryOverview['directory']['state'];
  createdAt: string;
  updatedAt: string;
  /** The identity provider's last SCIM write ("Last sync …"); null before its first. */
  lastSyncRunAt: string | null;
  metadata: { users: { active: number; inactive: number }; groups: number };
}

function toWidgetDirectory({ directory, lastSyncAt }: DirectoryOverview): WidgetDirectory {
  return {
    id: directory.id,
    name: directory.name,
    type: directory.type,
    state: directory.state,
    createdAt: directory.created_at,
    updatedAt: directory.updated_at,
    lastSyncRunAt: lastSyncAt,
    metadata: { users: directory.metadata.users, groups: directory.metadata.groups },
  };
}

/**
 * `GET /_widgets/directory-sync/directories` (`DirectoriesResponse`): the token's organization's
 * directories, and the admin-portal link of the widget's "Set up directory" / "Manage" button, a
 * plain `<a href>` opened in a new tab: a fresh single-use dsync link (for a portal session, its
 * own page: no link minted).
 */
export async function listWidgetDirectories(scope: ClientScope): Promise<{ data: WidgetDirectory[]; link: string }> {
  requirePermission(scope, PERMISSION);
  const data = (await organizationDirectories(scope, scope.client.organizationId)).map(toWidgetDirectory);
  const { link } = await createPortalLinkForClient(scope, 'dsync');
  return { data, link };
}

/**
 * `GET /_widgets/directory-sync/directories/:id`: one directory of the organization. Another
 * organization's is 404 whatever the token holds (as a missing one); the organization's own needs
 * the scope (403).
 */
export async function getWidgetDirectory(scope: ClientScope, id: string): Promise<WidgetDirectory> {
  const overview = await organizationDirectory(scope, scope.client.organizationId, id);
  requirePermission(scope, PERMISSION);
  return toWidgetDirectory(overview);
}
