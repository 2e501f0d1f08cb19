import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { recordEvent } from '../events/record.ts';
import { notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { toOrganizationMembership } from '../organization-memberships/service.ts';
import { findMembership } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import type {
  CreateGroupInput,
  Group,
  GroupMembershipInput,
  GroupPathInput,
  ListGroupMembershipsInput,
  ListGroupsInput,
  ListMembershipGroupsInput,
  UpdateGroupInput,
} from './schemas.ts';
import {
  assertBelowGroupsPerOrganization,
  deleteGroupMembership,
  deleteGroupRow,
  findGroup,
  type GroupChanges,
  type GroupRow,
  insertGroup,
  insertGroupMembership,
  pageOfGroupMemberships,
  pageOfGroups,
  pageOfMembershipGroups,
  updateGroupRow,
} from './store.ts';

type GroupPath = z.infer<typeof GroupPathInput>;

/** The single place that turns a group row into its wire shape. */
export function toGroup(row: GroupRow): Group {
  return {
    object: 'group',
    id: row.id,
    organization_id: row.organizationId,
    name: row.name,
    description: row.description,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The data of `group.member_added` / `group.member_removed`, as the SDK's event types declare it. */
function memberEvent(groupId: string, membershipId: string) {
  return { group_id: groupId, organization_membership_id: membershipId };
}

export async function listGroups(scope: Scope, input: z.infer<typeof ListGroupsInput>) {
  const params = pageParams(input);
  await requireOrganization(scope.db, scope, input.organization_id);
  return asList(await pageOfGroups(scope.db, scope.env.id, input.organization_id, params), toGroup);
}

export async function getGroup(scope: Scope, path: GroupPath): Promise<Group> {
  return toGroup(await findGroup(scope.db, scope.env.id, path));
}

export async function createGroup(scope: Scope, input: z.infer<typeof CreateGroupInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    // NO KEY UPDATE, not SHARE: it also serialises the creates counted against the groups quota.
    await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowGroupsPerOrganization(tx, scope, input.organization_id);
    const now = scope.now();
    const row = await insertGroup(tx, {
      id: newId('group'),
      environmentId: scope.env.id,
      organizationId: input.organization_id,
      name: input.name,
      description: input.description ?? null,
      createdAt: now,
      updatedAt: now,
    });
    const group = toGroup(row);
    await recordEvent(tx, scope, 'group.created', group);
    return group;
  });
}

export async function updateGroup(scope: Scope, input: z.infer<typeof UpdateGroupInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    const current = await findGroup(tx, scope.env.id, input, 'update');
    const changes: GroupChanges = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return toGroup(current);
    const group = toGroup(await updateGroupRow(tx, current.id, { ...changes, updatedAt: scope.now() }));
    await recordEvent(tx, scope, 'group.updated', group);
    return group;
  });
}

/** Deletes the group; its links to memberships go with it by foreign key. The memberships stay. */
export async function deleteGroup(scope: Scope, path: GroupPath): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await findGroup(tx, scope.env.id, path, 'update');
    await deleteGroupRow(tx, current.id);
    await recordEvent(tx, scope, 'group.deleted', toGroup(current));
  });
}

/**
 * Adds a membership of the group's organization to the group and returns the group. Adding one
 * already there (or racing another add of it) is a no-op without an event.
 */
export async function addGroupMembership(scope: Scope, input: z.infer<typeof GroupMembershipInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    // Both rows are held until the link is written: a concurrent delete of either waits (then
    // cascades to the link) or has won (404), never a foreign-key violation.
    const group = await findGroup(tx, scope.env.id, input, 'key share');
    const membership = await findMembership(tx, scope.env.id, input.organization_membership_id, true);
    // A membership of another organization is as unknown here as one of another environment.
    if (membership.organizationId !== group.organizationId) {
      throw notFound('organization_membership', input.organization_membership_id);
    }
    const added = await insertGroupMembership(tx, scope.env.id, group.id, membership.id, scope.now());
    const wire = toGroup(group);
    if (added) {
      const data = memberEvent(group.id, membership.id);
      await recordEvent(tx, scope, 'group.member_added', data, group.organizationId);
    }
    return wire;
  });
}

/** Removes the membership from the group only; the membership itself stays. */
export async function removeGroupMembership(scope: Scope, input: z.infer<typeof GroupMembershipInput>): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const group = await findGroup(tx, scope.env.id, input);
    const membershipId = input.organization_membership_id;
    if (!(await deleteGroupMembership(tx, scope.env.id, group.id, membershipId))) {
      throw notFound('organization_membership', membershipId);
    }
    await recordEvent(tx, scope, 'group.member_removed', memberEvent(group.id, membershipId), group.organizationId);
  });
}

/** A group's memberships, in membership-id (creation) order. */
export async function listGroupMemberships(scope: Scope, input: z.infer<typeof ListGroupMembershipsInput>) {
  const params = pageParams(input);
  const group = await findGroup(scope.db, scope.env.id, input);
  return asList(await pageOfGroupMemberships(scope.db, scope.env.id, group.id, params), toOrganizationMembership);
}

/** The groups one membership belongs to, in group-id (creation) order. */
export async function listMembershipGroups(scope: Scope, input: z.infer<typeof ListMembershipGroupsInput>) {
  const params = pageParams(input);
  const membership = await findMembership(scope.db, scope.env.id, input.id);
  return asList(await pageOfMembershipGroups(scope.db, scope.env.id, membership.id, params), toGroup);
}
