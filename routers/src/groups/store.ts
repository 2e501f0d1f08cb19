import {
  type Db,
  groupMemberships,
  groups,
  type KeysetOp,
  keysetCondition,
  type PageParams,
  paginate,
  perHandle,
  perHandleAndKey,
} from '@atrium/db';
import { and, asc, desc, eq, getTableColumns, type SQLWrapper, sql } from 'drizzle-orm';
import { orNotFound } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { selectMembershipsThrough } from '../organization-memberships/store.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';

export type GroupRow = typeof groups.$inferSelect;
export type NewGroup = typeof groups.$inferInsert;
export type GroupChanges = Partial<NewGroup>;

/** A group is named by its path: it is reached only through its organization. */
export interface GroupPath {
  organization_id: string;
  group_id: string;
}

/** The group of a path in an environment, by values or by a prepared statement's placeholders. */
function groupAt(environmentId: string | SQLWrapper, organizationId: string | SQLWrapper, id: string | SQLWrapper) {
  return and(eq(groups.environmentId, environmentId), eq(groups.organizationId, organizationId), eq(groups.id, id));
}

/** The group by its path, prepared once per database handle. See bench/README.md, "Fourth pass". */
const groupByPath = perHandle((db: Db) =>
  db
    .select()
    .from(groups)
    .where(groupAt(sql.placeholder('env'), sql.placeholder('organization'), sql.placeholder('id')))
    .limit(1)
    .prepare('groups_by_path'),
);

/** The pages of a group's memberships: one statement per handle and shape (direction × cursor comparison). */
const groupMembershipsPage = perHandleAndKey((db: Db, shape: `${boolean}:${KeysetOp | 'first'}`) => {
  const [ascending, op] = shape.split(':') as [string, KeysetOp | 'first'];
  const member = groupMemberships.organizationMembershipId;
  return selectMembershipsThrough(db, groupMemberships, member)
    .where(
      and(
        eq(groupMemberships.environmentId, sql.placeholder('env')),
        eq(groupMemberships.groupId, sql.placeholder('group')),
        op === 'first' ? undefined : keysetCondition(member, op, sql.placeholder('cursor')),
      ),
    )
    .orderBy(ascending === 'true' ? asc(member) : desc(member))
    .limit(sql.placeholder('limit'))
    .prepare(`group_memberships_${ascending === 'true' ? 'asc' : 'desc'}_${op}`);
});

/**
 * The group of the path in the environment, or 404. `lock`: 'update' to change the group,
 * 'key share' to write a row referencing it; without one, the prepared statement.
 */
export async function findGroup(
  db: Db,
  environmentId: string,
  path: GroupPath,
  lock: false | 'update' | 'key share' = false,
): Promise<GroupRow> {
  const [row] = lock
    ? await db
        .select()
        .from(groups)
        .where(groupAt(environmentId, path.organization_id, path.group_id))
        .limit(1)
        .for(lock)
    : await groupByPath(db).execute({
        env: environmentId,
        organization: path.organization_id,
        id: path.group_id,
      });
  return orNotFound(row, 'group', path.group_id);
}

/** One page of an organization's groups. */
export function pageOfGroups(db: Db, environmentId: string, organizationId: string, params: PageParams) {
  return paginate(
    params,
    groups.id,
    (q) =>
      db
        .select()
        .from(groups)
        .where(and(eq(groups.environmentId, environmentId), eq(groups.organizationId, organizationId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

export async function insertGroup(tx: Db, values: NewGroup): Promise<GroupRow> {
  const [row] = await tx.insert(groups).values(values).returning();
  return row as GroupRow;
}

export async function updateGroupRow(tx: Db, id: string, changes: GroupChanges): Promise<GroupRow> {
  const [row] = await tx.update(groups).set(changes).where(eq(groups.id, id)).returning();
  return row as GroupRow;
}

/** Deletes the group; its links to memberships go with it by foreign key. */
export async function deleteGroupRow(tx: Db, id: string): Promise<void> {
  await tx.delete(groups).where(eq(groups.id, id));
}

/** Links a membership to a group; false if the link was already there (it yields to the key). */
export async function insertGroupMembership(
  tx: Db,
  environmentId: string,
  groupId: string,
  membershipId: string,
  now: Date,
): Promise<boolean> {
  const inserted = await tx
    .insert(groupMemberships)
    .values({ environmentId, groupId, organizationMembershipId: membershipId, createdAt: now })
    .onConflictDoNothing()
    .returning({ groupId: groupMemberships.groupId });
  return inserted.length > 0;
}

/** Unlinks a membership from a group; false if it was not linked. */
export async function deleteGroupMembership(
  tx: Db,
  environmentId: string,
  groupId: string,
  membershipId: string,
): Promise<boolean> {
  const deleted = await tx
    .delete(groupMemberships)
    .where(
      and(
        eq(groupMemberships.environmentId, environmentId),
        eq(groupMemberships.groupId, groupId),
        eq(groupMemberships.organizationMembershipId, membershipId),
      ),
    )
    .returning({ id: groupMemberships.organizationMembershipId });
  return deleted.length > 0;
}

/** One page of a group's memberships, in membership-id (creation) order, keyset on the link's index. */
export function pageOfGroupMemberships(db: Db, environmentId: string, groupId: string, params: PageParams) {
  return paginate(
    params,
    groupMemberships.organizationMembershipId,
    (q) => {
      const { ascending, cursor } = q.shape;
      return groupMembershipsPage(db, `${ascending}:${cursor?.op ?? 'first'}`).execute({
        env: environmentId,
        group: groupId,
        cursor: cursor?.value,
        limit: q.limit,
      });
    },
    (row) => row.id,
  );
}

/** One page of the groups a membership belongs to, in group-id (creation) order. */
export function pageOfMembershipGroups(db: Db, environmentId: string, membershipId: string, params: PageParams) {
  return paginate(
    params,
    groupMemberships.groupId,
    (q) =>
      db
        .select(getTableColumns(groups))
        .from(groupMemberships)
        .innerJoin(groups, eq(groups.id, groupMemberships.groupId))
        .where(
          and(
            eq(groupMemberships.organizationMembershipId, membershipId),
            eq(groupMemberships.environmentId, environmentId),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** Refuses a group that would take the organization past `groupsPerOrganization`; the caller holds its row. */
export function assertBelowGroupsPerOrganization(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  return assertBelowParentQuota(
    tx,
    scope,
    'groupsPerOrganization',
    { table: groups, parent: groups.organizationId },
    organizationId,
  );
}
