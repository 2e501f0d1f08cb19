// The lookups the admin surface names a directory or group by, and the operator's view of the
// groups' role mapping (the mapping itself: roles-mapping.ts).

import type { Db } from '@atrium/db';
import { orNotFound } from '../common/store.ts';
import { environmentIdOfDirectory, environmentIdOfDirectoryGroup, roleSlugsOfDirectoryGroups } from './store.ts';

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
