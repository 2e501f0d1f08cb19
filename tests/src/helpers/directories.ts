import { type DirectoryType, directories } from '@atrium/db';
import { createDirectory, createDirectoryGroup, createDirectoryUser, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { uniqueEmail } from './people.ts';
import type { TestEnvironment } from './world.ts';

/** The stored row of a directory (what the sync functions take). */
export async function directoryRow(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(directories).where(eq(directories.id, id));
  if (!row) throw new Error(`no directory ${id}`);
  return row;
}

/**
 * What a directory's identity provider pushes, through the protocol-free sync functions:
 * `active` and `inactive` users (unique e-mails) and `groups` groups holding the active users.
 */
export async function pushToDirectory(
  env: TestEnvironment,
  directoryId: string,
  options: { active?: number; inactive?: number; groups?: number } = {},
): Promise<string[]> {
  const scope = await scopeOf(env.deps, env.environmentId);
  const users: string[] = [];
  const push = async (active: boolean, index: number) => {
    const email = uniqueEmail(active ? `scim${index}` : `gone${index}`);
    const row = await createDirectoryUser(scope, await directoryRow(env, directoryId), {
      userName: email,
      externalId: `ext-${email}`,
      email,
      firstName: 'Scim',
      lastName: `User ${index}`,
      active,
      attributes: { userName: email, active, emails: [{ value: email, primary: true, type: 'work' }] },
      customAttributes: {},
    });
    if (active) users.push(row.id);
  };
  for (let i = 0; i < (options.active ?? 0); i += 1) await push(true, i);
  for (let i = 0; i < (options.inactive ?? 0); i += 1) await push(false, i);
  for (let i = 0; i < (options.groups ?? 0); i += 1) {
    const displayName = `Group ${i}`;
    await createDirectoryGroup(
      scope,
      await directoryRow(env, directoryId),
      { displayName, externalId: `ext-group-${i}-${directoryId}`, attributes: { displayName } },
      users,
    );
  }
  return users;
}

/** A directory of the organization (as an operator creates it: its token shown once), and what `pushToDirectory` pushed. */
export async function directoryWithUsers(
  env: TestEnvironment,
  organizationId: string,
  options: { type?: DirectoryType; name?: string; active?: number; inactive?: number; groups?: number } = {},
) {
  const scope = await scopeOf(env.deps, env.environmentId);
  const created = await createDirectory(scope, {
    organization_id: organizationId,
    type: options.type ?? 'okta scim v2.0',
    name: options.name ?? 'Employees',
  });
  return { directory: created, userIds: await pushToDirectory(env, created.id, options) };
}

/** The DirectorySync widget's scope. Not a system permission yet: DSYNC_ROLE holds it. */
export const DSYNC_SCOPE = 'widgets:dsync:manage';
/** An environment role holding DSYNC_SCOPE only (made by `ensureDsyncRole`). */
export const DSYNC_ROLE = 'dsync-manager';

/** Makes the permission DSYNC_SCOPE and the role DSYNC_ROLE holding it in the environment, once. */
export async function ensureDsyncRole(env: TestEnvironment): Promise<void> {
  const permission = await env.http.post('/authorization/permissions', { slug: DSYNC_SCOPE, name: 'Directory sync' });
  if (permission.status !== 201 && permission.status !== 409) throw new Error(`permission: ${permission.text}`);
  const role = await env.http.post('/authorization/roles', { slug: DSYNC_ROLE, name: 'Directory sync manager' });
  if (role.status === 409) return;
  if (role.status !== 201) throw new Error(`role: ${role.status} ${role.text}`);
  const set = await env.http.put(`/authorization/roles/${DSYNC_ROLE}/permissions`, { permissions: [DSYNC_SCOPE] });
  if (set.status !== 200) throw new Error(`role permissions: ${set.status} ${set.text}`);
}
