import { randomBytes } from 'node:crypto';
import { type MembershipStatus, newId, organizationMemberships, users } from '@atrium/db';
import { createCaller, createInnerContext, ensureAdminToken } from '@atrium/routers';
import { getWorld, type TestEnvironment } from './world.ts';

let adminToken: Promise<string> | undefined;

/** An admin token, registered once per worker. */
export async function adminTokenOf(): Promise<string> {
  const world = await getWorld();
  adminToken ??= (async () => {
    const token = `atrium_admin_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;
    await ensureAdminToken(world.deps, token);
    return token;
  })();
  return adminToken;
}

/** A tRPC caller of the admin router. */
export async function adminCaller() {
  const world = await getWorld();
  return createCaller(createInnerContext(world.deps, `Bearer ${await adminTokenOf()}`)).admin;
}

/** An organization of the environment, through the API. */
export async function makeOrganization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const organization = await env.caller.organizations.create({ name });
  return organization.id;
}

/**
 * A user of the environment and, unless `membership` is null, their membership of the
 * organization — inserted straight through Drizzle (the users API lives on another branch).
 */
export async function makeMember(
  env: TestEnvironment,
  organizationId: string | null,
  membership: MembershipStatus | null = 'active',
): Promise<string> {
  const db = env.deps.db;
  const userId = newId('user');
  await db.insert(users).values({
    id: userId,
    environmentId: env.environmentId,
    email: `${userId.toLowerCase()}@example.org`,
  });
  if (organizationId && membership) {
    await db.insert(organizationMemberships).values({
      id: newId('organizationMembership'),
      environmentId: env.environmentId,
      userId,
      organizationId,
      status: membership,
    });
  }
  return userId;
}
