// The operator's group -> role mapping of a directory (issue #36): members of a mapped group get
// its role in the directory's organization; the admin surfaces (console, CLI, admin procedures)
// call this.
import { orNotFound } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertRoleSlugs } from '../roles/service.ts';
import { syncDirectoryRoles } from './provisioning.ts';
import type { DirectoryGroup } from './schemas.ts';
import { toDirectoryGroup } from './service.ts';
import { findDirectoryGroup, loadDirectoryGroup, provisionedUsersOfGroup, setGroupRole } from './store.ts';

/** A directory group and the role its members get (null: none). */
export interface DirectoryGroupRole {
  group: DirectoryGroup;
  role: { slug: string } | null;
}

/**
 * Maps a directory group to a role of its organization (an organization role shadows an
 * environment role of the same slug; unknown: 422 `role_not_found`), or unmaps it (`null`); an
 * unknown group, or one of another environment, is 404. The group's members' memberships get the
 * roles of all their mapped groups at once, and those left in no mapped group the environment's
 * default role (`organization_membership.updated` once per membership whose roles change).
 * Setting the mapping it has already changes nothing. Serialised with SCIM writes to the group.
 */
export async function setDirectoryGroupRole(
  scope: Scope,
  groupId: string,
  roleSlug: string | null,
): Promise<DirectoryGroupRole> {
  return scope.db.transaction(async (tx) => {
    const found = await loadDirectoryGroup(tx, scope.env.id, groupId);
    const group = orNotFound(
      await findDirectoryGroup(tx, found.directoryId, found.id, 'update'),
      'directory_group',
      groupId,
    );
    const role =
      roleSlug === null ? null : ((await assertRoleSlugs(tx, scope, group.organizationId, { roleSlug }))[0] ?? null);
    const roleId = role?.id ?? null;
    if (roleId !== group.roleId) {
      await setGroupRole(tx, group.id, roleId);
      const users = await provisionedUsersOfGroup(tx, group.id);
      await syncDirectoryRoles(tx, scope, group.organizationId, users, true);
    }
    return { group: toDirectoryGroup(group), role: role ? { slug: role.slug } : null };
  });
}
