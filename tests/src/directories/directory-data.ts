import { directories } from '@atrium/db';
import { createDirectoryGroup, createDirectoryUser, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { adminCaller, adminTokenOf, makeOrganization } from '../helpers/tokens.ts';
import { getWorld, type TestEnvironment } from '../helpers/world.ts';

// Directory data for the directories API tests: a directory made by the operator (the admin
// procedure, as the CLI and console make one), and users and groups written through the
// protocol-free sync functions the SCIM surface calls, so these tests need no SCIM.

/** The worker's database, server and admin token, made before the first test (in a hook's longer timeout). */
export async function warmUp(): Promise<void> {
  await getWorld();
  await adminTokenOf();
}

export type MadeDirectory = Awaited<ReturnType<typeof makeDirectory>>;

/** A directory of a new organization (or of `organizationId`), with its token (shown once). */
export async function makeDirectory(
  env: TestEnvironment,
  options: {
    organizationId?: string;
    name?: string;
    type?: 'okta scim v2.0' | 'azure scim v2.0';
    domain?: string;
  } = {},
) {
  const admin = await adminCaller();
  const organizationId = options.organizationId ?? (await makeOrganization(env));
  return admin.directories.create({
    environment: env.environmentId,
    organization_id: organizationId,
    type: options.type ?? 'okta scim v2.0',
    name: options.name ?? 'Acme Okta',
    ...(options.domain ? { domain: options.domain } : {}),
  });
}

async function rowOf(env: TestEnvironment, directoryId: string) {
  const [row] = await env.deps.db.select().from(directories).where(eq(directories.id, directoryId));
  if (!row) throw new Error(`no directory ${directoryId}`);
  return row;
}

/** A SCIM user as Okta sends one, stored as the SCIM surface would store it. */
export async function pushUser(
  env: TestEnvironment,
  directoryId: string,
  user: { userName: string; givenName?: string; familyName?: string; active?: boolean; title?: string },
) {
  const scope = await scopeOf(env.deps, env.environmentId);
  const attributes: Record<string, unknown> = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: user.userName,
    externalId: `ext-${user.userName}`,
    name: { givenName: user.givenName ?? 'Ada', familyName: user.familyName ?? 'Lovelace' },
    emails: [{ value: user.userName, primary: true, type: 'work' }],
    active: user.active ?? true,
    ...(user.title ? { title: user.title } : {}),
  };
  return createDirectoryUser(scope, await rowOf(env, directoryId), {
    userName: user.userName,
    externalId: `ext-${user.userName}`,
    email: user.userName,
    firstName: user.givenName ?? 'Ada',
    lastName: user.familyName ?? 'Lovelace',
    active: user.active ?? true,
    attributes,
    customAttributes: user.title ? { job_title: user.title } : {},
  });
}

/** A SCIM group with members (directory user ids). */
export async function pushGroup(env: TestEnvironment, directoryId: string, displayName: string, memberIds: string[]) {
  const scope = await scopeOf(env.deps, env.environmentId);
  return createDirectoryGroup(
    scope,
    await rowOf(env, directoryId),
    {
      displayName,
      externalId: `ext-${displayName}`,
      attributes: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName },
    },
    memberIds,
  );
}
