// The operator's group -> role mapping of a directory, and the lookups the admin surface names a
// directory or group by. `setDirectoryGroupRole` here is a minimal stand-in (it stores the
// mapping only) written while the provisioning helper (h36-prov) writes the real one, which also
// applies the mapping to the members' memberships, in roles-mapping.ts: on merging, the admin
// procedure calls that one and this function and `setDirectoryGroupRoleId` (store.ts) go.
import type { Db } from '@atrium/db';
import { orNotFound } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertRoleSlugs } from '../roles/service.ts';
import type { DirectoryGroup } from './schemas.ts';
import { toDirectoryGroup } from './service.ts';
import {
  environmentIdOfDirectory,
  environmentIdOfDirectoryGroup,
  loadDirectoryGroup,
  roleSlugsOfDirectoryGroups,
  setDirectoryGroupRoleId,
} from './store.ts';

/** Maps a directory group to a role of its organization (the organization's own, else the environment's), or to none. */
export async function setDirectoryGroupRole(
  scope: Scope,
  groupId: string,
  roleSlug: string | null,
): Promise<DirectoryGroup> {
  return scope.db.transaction(async (tx) => {
    const group = await loadDirectoryGroup(tx, scope.env.id, groupId);
    const roleId =
      roleSlug === null
        ? null
        : ((await assertRoleSlugs(tx, scope, group.organizationId, { roleSlug }))[0]?.id ?? null);
    const row = orNotFound(
      await setDirectoryGroupRoleId(tx, scope.env.id, groupId, roleId, scope.now()),
      'directory_group',
      groupId,
    );
    return toDirectoryGroup(row);
  });
}

/** The role slug each group maps to, for the operator's view of a directory's groups. */
export function roleSlugsOfGroups(db: Db, groupIds: string[]): Promise<Map<string, string>> {
  return roleSlugsOfDirectoryGroups(db, groupIds);
}

/** The environment of a directory, or 404 (the CLI and console name a directory by id alone). */
export async function environmentOfDirectory(db: Db, id: string): Promise<string> {
  return orNotFound(await environmentIdOfDirectory(db, id), 'directory', id);
}

/** The environment of a directory group, or 404. */
export async function environmentOfDirectoryGroup(db: Db, id: string): Promise<string> {
  return orNotFound(await environmentIdOfDirectoryGroup(db, id), 'directory_group', id);
}
