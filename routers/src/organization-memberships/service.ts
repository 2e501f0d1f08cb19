import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { alreadyMember, notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';
import type {
  CreateOrganizationMembershipInput,
  ListOrganizationMembershipsInput,
  OrganizationMembership,
} from './schemas.ts';
import {
  deleteMembership,
  findMembership,
  insertMembership,
  lockMembership,
  lockUser,
  type MembershipRow,
  pageOfMemberships,
  updateMembershipStatus,
} from './store.ts';

/** The single place that turns a membership row (with its organization's name) into its wire shape. */
export function toOrganizationMembership(row: MembershipRow): OrganizationMembership {
  return {
    object: 'organization_membership',
    id: row.id,
    user_id: row.userId,
    organization_id: row.organizationId,
    organization_name: row.organizationName,
    status: row.status,
    directory_managed: row.directoryManaged,
    custom_attributes: row.customAttributes,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export async function getOrganizationMembership(scope: Scope, id: string): Promise<OrganizationMembership> {
  return toOrganizationMembership(await findMembership(scope.db, scope.env.id, id));
}

export async function listOrganizationMemberships(
  scope: Scope,
  input: z.infer<typeof ListOrganizationMembershipsInput>,
) {
  const page = await pageOfMemberships(scope.db, scope.env.id, pageParams(input), {
    userId: input.user_id,
    organizationId: input.organization_id,
    statuses: input.statuses,
  });
  return asList(page, toOrganizationMembership);
}

export async function createOrganizationMembership(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationMembershipInput>,
): Promise<OrganizationMembership> {
  return scope.db.transaction((tx) =>
    addMembership(tx, scope, { userId: input.user_id, organizationId: input.organization_id }),
  );
}

export interface AddMembership {
  userId: string;
  organizationId: string;
  roleSlug?: string | undefined;
  roleSlugs?: string[] | undefined;
}

/**
 * Creates a membership in the caller's transaction and records its event: the one write path of
 * a membership (create, and an accepted invitation). Role slugs are taken by the roles work.
 */
export async function addMembership(tx: Db, scope: Scope, input: AddMembership): Promise<OrganizationMembership> {
  // The user and the organization are held so that a concurrent delete of either waits, or
  // won and this answers 404; the user's lock also serialises the memberships-per-user count.
  const user = await lockUser(tx, scope.env.id, input.userId);
  await assertBelowParentQuota(tx, scope, 'membershipsPerUser', user.id);
  const organization = await requireOrganization(tx, scope, input.organizationId, 'share');
  const now = scope.now();
  const row = await insertMembership(tx, {
    id: newId('organizationMembership'),
    environmentId: scope.env.id,
    userId: user.id,
    organizationId: organization.id,
    status: 'active',
    directoryManaged: false,
    customAttributes: {},
    createdAt: now,
    updatedAt: now,
  });
  const membership = toOrganizationMembership({ ...row, organizationName: organization.name });
  await recordEvent(tx, scope, 'organization_membership.created', membership);
  return membership;
}

/** Deactivate and reactivate: sets the status; an unchanged status is a no-op without an event. */
export async function setMembershipStatus(
  scope: Scope,
  id: string,
  status: 'active' | 'inactive',
): Promise<OrganizationMembership> {
  return scope.db.transaction(async (tx) => {
    const current = await lockMembership(tx, scope.env.id, id);
    const changed = current.status !== status;
    if (changed) await updateMembershipStatus(tx, current.id, status, scope.now());
    const membership = toOrganizationMembership(await findMembership(tx, scope.env.id, id));
    if (changed) await recordEvent(tx, scope, 'organization_membership.updated', membership);
    return membership;
  });
}

/** Deletes the membership; its group links go with it by foreign key, in the same statement. */
export async function deleteOrganizationMembership(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await findMembership(tx, scope.env.id, id);
    if (!(await deleteMembership(tx, scope.env.id, id))) throw notFound('organization_membership', id);
    await recordEvent(tx, scope, 'organization_membership.deleted', toOrganizationMembership(current));
  });
}
