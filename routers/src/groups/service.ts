import {
  type Db,
  groupMemberships,
  groups,
  type KeysetOp,
  keysetCondition,
  newId,
  organizationMemberships,
  organizations,
  type PageQuery,
  paginate,
  perHandle,
} from '@atrium/db';
import { and, asc, desc, eq, getTableColumns, type SQLWrapper, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import type { OrganizationMembership } from '../organization-memberships/schemas.ts';
import { membershipColumns, requireMembership, toOrganizationMembership } from '../organization-memberships/service.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowQuota } from '../quotas.ts';
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

type GroupRow = typeof groups.$inferSelect;
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

/** The group of a path in an environment, by values or by a prepared statement's placeholders. */
function groupAt(environmentId: string | SQLWrapper, organizationId: string | SQLWrapper, id: string | SQLWrapper) {
  return and(eq(groups.environmentId, environmentId), eq(groups.organizationId, organizationId), eq(groups.id, id));
}

/**
 * The reads of a group's membership list as prepared statements, built once per database handle
 * (`perHandle`, as the organization reads): the group by its path, and one page statement per
 * shape (direction × cursor comparison). Built per request, the three-table join cost Drizzle
 * more CPU than PostgreSQL spent running it (profiled).
 */
const groupReads = perHandle((db: Db) => {
  const env = sql.placeholder('env');
  const byPath = db
    .select()
    .from(groups)
    .where(groupAt(env, sql.placeholder('organization'), sql.placeholder('id')))
    .limit(1)
    .prepare('groups_by_path');
  const member = groupMemberships.organizationMembershipId;
  function preparePage(ascending: boolean, op: KeysetOp | undefined) {
    return db
      .select(membershipColumns)
      .from(groupMemberships)
      .innerJoin(organizationMemberships, eq(organizationMemberships.id, member))
      .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
      .where(
        and(
          eq(groupMemberships.environmentId, env),
          eq(groupMemberships.groupId, sql.placeholder('group')),
          keysetCondition(member, op, sql.placeholder('cursor')),
        ),
      )
      .orderBy(ascending ? asc(member) : desc(member))
      .limit(sql.placeholder('limit'))
      .prepare(`group_memberships_${ascending ? 'asc' : 'desc'}_${op ?? 'first'}`);
  }
  const pages = new Map<string, ReturnType<typeof preparePage>>();
  return {
    byPath,
    /** One page (or probe) of a group's memberships. */
    page(q: PageQuery, environmentId: string, groupId: string) {
      const { ascending, cursor } = q.shape;
      const name = `${ascending}:${cursor?.op ?? ''}`;
      let statement = pages.get(name);
      if (!statement) {
        statement = preparePage(ascending, cursor?.op);
        pages.set(name, statement);
      }
      return statement.execute({ env: environmentId, group: groupId, cursor: cursor?.value, limit: q.limit });
    },
  };
});

/** The group, scoped by environment and by the organization of the path, or 404. */
/** `lock`: 'update' to change the group, 'key share' to write a row referencing it. */
async function requireGroup(
  db: Db,
  scope: Scope,
  path: GroupPath,
  lock: false | 'update' | 'key share' = false,
): Promise<GroupRow> {
  const [row] = lock
    ? await db
        .select()
        .from(groups)
        .where(groupAt(scope.env.id, path.organization_id, path.group_id))
        .limit(1)
        .for(lock)
    : await groupReads(db).byPath.execute({ env: scope.env.id, organization: path.organization_id, id: path.group_id });
  if (!row) throw notFound('group', path.group_id);
  return row;
}

/** The data of `group.member_added` / `group.member_removed`. */
function memberEvent(group: Group, membership: OrganizationMembership) {
  return { group, organization_membership: membership };
}

export async function listGroups(scope: Scope, input: z.infer<typeof ListGroupsInput>) {
  const params = pageParams(input);
  await requireOrganization(scope.db, scope, input.organization_id);
  const page = await paginate(
    params,
    groups.id,
    (q) =>
      scope.db
        .select()
        .from(groups)
        .where(and(eq(groups.environmentId, scope.env.id), eq(groups.organizationId, input.organization_id), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  return asList(page, toGroup);
}

export async function getGroup(scope: Scope, path: GroupPath): Promise<Group> {
  return toGroup(await requireGroup(scope.db, scope, path));
}

export async function createGroup(scope: Scope, input: z.infer<typeof CreateGroupInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    // NO KEY UPDATE, not SHARE: it also serialises the creates counted against the groups quota.
    await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowQuota(
      tx,
      scope.deps,
      'groupsPerOrganization',
      groups,
      and(eq(groups.environmentId, scope.env.id), eq(groups.organizationId, input.organization_id)),
    );
    const now = scope.now();
    const [row] = await tx
      .insert(groups)
      .values({
        id: newId('group'),
        environmentId: scope.env.id,
        organizationId: input.organization_id,
        name: input.name,
        description: input.description ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const group = toGroup(row as GroupRow);
    await recordEvent(tx, scope, 'group.created', group);
    return group;
  });
}

export async function updateGroup(scope: Scope, input: z.infer<typeof UpdateGroupInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    const current = await requireGroup(tx, scope, input, 'update');
    const changes: Partial<typeof groups.$inferInsert> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return toGroup(current);
    const [row] = await tx
      .update(groups)
      .set({ ...changes, updatedAt: scope.now() })
      .where(eq(groups.id, current.id))
      .returning();
    const group = toGroup(row as GroupRow);
    await recordEvent(tx, scope, 'group.updated', group);
    return group;
  });
}

/** Deletes the group; its links to memberships go with it by foreign key. The memberships stay. */
export async function deleteGroup(scope: Scope, path: GroupPath): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await requireGroup(tx, scope, path, 'update');
    await tx.delete(groups).where(eq(groups.id, current.id));
    await recordEvent(tx, scope, 'group.deleted', toGroup(current));
  });
}

/**
 * Adds a membership of the group's organization to the group and returns the group. Adding one
 * that is already there is a no-op (no event); concurrent adds of the same membership leave one
 * link, because the insert yields to the primary key instead of failing on it.
 */
export async function addGroupMembership(scope: Scope, input: z.infer<typeof GroupMembershipInput>): Promise<Group> {
  return scope.db.transaction(async (tx) => {
    // Both rows are held until the link is written: a concurrent delete of the group or of the
    // membership waits (and then cascades to the link) or has won (and this answers 404), never
    // a foreign-key violation.
    const group = await requireGroup(tx, scope, input, 'key share');
    const membership = await requireMembership(tx, scope, input.organization_membership_id, true);
    // A membership of another organization is as unknown here as one of another environment.
    if (membership.organizationId !== group.organizationId) {
      throw notFound('organization_membership', input.organization_membership_id);
    }
    const inserted = await tx
      .insert(groupMemberships)
      .values({
        environmentId: scope.env.id,
        groupId: group.id,
        organizationMembershipId: membership.id,
        createdAt: scope.now(),
      })
      .onConflictDoNothing()
      .returning({ groupId: groupMemberships.groupId });
    const wire = toGroup(group);
    if (inserted.length > 0) {
      await recordEvent(
        tx,
        scope,
        'group.member_added',
        memberEvent(wire, toOrganizationMembership(membership)),
        group.organizationId,
      );
    }
    return wire;
  });
}

/** Removes the membership from the group only; the membership itself stays. */
export async function removeGroupMembership(scope: Scope, input: z.infer<typeof GroupMembershipInput>): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const group = await requireGroup(tx, scope, input);
    const deleted = await tx
      .delete(groupMemberships)
      .where(
        and(
          eq(groupMemberships.environmentId, scope.env.id),
          eq(groupMemberships.groupId, group.id),
          eq(groupMemberships.organizationMembershipId, input.organization_membership_id),
        ),
      )
      .returning({ id: groupMemberships.organizationMembershipId });
    if (deleted.length === 0) throw notFound('organization_membership', input.organization_membership_id);
    const membership = await requireMembership(tx, scope, input.organization_membership_id);
    await recordEvent(
      tx,
      scope,
      'group.member_removed',
      memberEvent(toGroup(group), toOrganizationMembership(membership)),
      group.organizationId,
    );
  });
}

/** A group's memberships, in membership-id (creation) order, keyset on the link's index. */
export async function listGroupMemberships(scope: Scope, input: z.infer<typeof ListGroupMembershipsInput>) {
  const params = pageParams(input);
  const group = await requireGroup(scope.db, scope, input);
  const page = await paginate(
    params,
    groupMemberships.organizationMembershipId,
    (q) => groupReads(scope.db).page(q, scope.env.id, group.id),
    (row) => row.id,
  );
  return asList(page, toOrganizationMembership);
}

/** The groups one membership belongs to, in group-id (creation) order. */
export async function listMembershipGroups(scope: Scope, input: z.infer<typeof ListMembershipGroupsInput>) {
  const params = pageParams(input);
  const membership = await requireMembership(scope.db, scope, input.id);
  const page = await paginate(
    params,
    groupMemberships.groupId,
    (q) =>
      scope.db
        .select(getTableColumns(groups))
        .from(groupMemberships)
        .innerJoin(groups, eq(groups.id, groupMemberships.groupId))
        .where(
          and(
            eq(groupMemberships.organizationMembershipId, membership.id),
            eq(groupMemberships.environmentId, scope.env.id),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  return asList(page, toGroup);
}
