// An organization's directories as its own people see them (the DirectorySync widget, the admin
// portal's dsync page): upstream's Directory with its counts, and when the identity provider last
// wrote. Never the token: it is shown once, by createDirectory and rotateDirectoryToken.
import { iso } from '../common/schemas.ts';
import { notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import type { Directory } from './schemas.ts';
import { toDirectory } from './service.ts';
import { type DirectoryRow, directoryCounts, loadDirectory, pageOfDirectories } from './store.ts';

export interface DirectoryOverview {
  /** Upstream's Directory, `metadata` (active and inactive users, groups) included. */
  directory: Directory & { metadata: NonNullable<Directory['metadata']> };
  /** The identity provider's last SCIM write, or null before its first. */
  lastSyncAt: string | null;
}

/** The most directories an overview lists (the quota of directories per organization is lower). */
const MOST = 100;

async function overviews(scope: Scope, rows: DirectoryRow[]): Promise<DirectoryOverview[]> {
  const counts = await directoryCounts(
    scope.db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => {
    const { active, inactive, groups } = counts.get(row.id) ?? { active: 0, inactive: 0, groups: 0 };
    const directory = toDirectory(row, { active, inactive, groups }) as DirectoryOverview['directory'];
    return { directory, lastSyncAt: row.lastSyncAt ? iso(row.lastSyncAt) : null };
  });
}

/** The organization's directories, newest first. */
export async function organizationDirectories(scope: Scope, organizationId: string): Promise<DirectoryOverview[]> {
  const page = await pageOfDirectories(scope.db, scope.env.id, { limit: MOST, order: 'desc' }, { organizationId });
  return overviews(scope, page.rows);
}

/** One directory of the organization; another organization's (or environment's) is 404, as a missing one. */
export async function organizationDirectory(
  scope: Scope,
  organizationId: string,
  id: string,
): Promise<DirectoryOverview> {
  const row = await loadDirectory(scope.db, scope.env.id, id);
  if (row.organizationId !== organizationId) throw notFound('directory', id);
  const [overview] = await overviews(scope, [row]);
  return overview as DirectoryOverview;
}
