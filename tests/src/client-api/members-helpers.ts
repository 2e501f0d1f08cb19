import { invitations, organizationMemberships } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { uniqueEmail } from '../helpers/people.ts';
import type { TestEnvironment } from '../helpers/world.ts';

/** A user with an active membership of the organization (API-key path), `extra` sent with the membership. */
export async function addMember(
  env: TestEnvironment,
  organizationId: string,
  options: { roleSlug?: string; directoryManaged?: boolean; firstName?: string; email?: string } = {},
) {
  const email = options.email ?? uniqueEmail('teammate');
  const user = await env.http.post('/user_management/users', { email, first_name: options.firstName ?? 'Grace' });
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: user.body.id,
    organization_id: organizationId,
    ...(options.roleSlug ? { role_slug: options.roleSlug } : {}),
    ...(options.directoryManaged ? { directory_managed: true } : {}),
  });
  if (membership.status !== 201) throw new Error(`membership: ${membership.status} ${membership.text}`);
  return { userId: user.body.id as string, email, membershipId: membership.body.id as string };
}

export async function membershipsOf(env: TestEnvironment, organizationId: string) {
  return env.deps.db
    .select()
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, env.environmentId),
        eq(organizationMemberships.organizationId, organizationId),
      ),
    );
}

export async function invitationsOf(env: TestEnvironment, organizationId: string) {
  return env.deps.db
    .select()
    .from(invitations)
    .where(and(eq(invitations.environmentId, env.environmentId), eq(invitations.organizationId, organizationId)));
}
