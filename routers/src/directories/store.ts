import {
  type Db,
  type DirectoryQuotaKind,
  directories,
  directoryGroupMembers,
  directoryGroups,
  directoryQuotaShards,
  directoryUsers,
  type PageParams,
  paginate,
  renderedOnce,
} from '@atrium/db';
import { and, eq, ilike, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
import { containsPattern, loadScoped, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';
import { roleSlugById } from '../roles/store.ts';

export type DirectoryRow = typeof directories.$inferSelect;
export type NewDirectory = typeof directories.$inferInsert;
export type DirectoryUserRow = typeof directoryUsers.$inferSelect;
export type NewDirectoryUser = typeof directoryUsers.$inferInsert;
export type DirectoryGroupRow = typeof directoryGroups.$inferSelect;
export type NewDirectoryGroup = typeof directoryGroups.$inferInsert;

export interface DirectoryFilter {
  organizationId?: string | undefined;
  search?: string | undefined;
  domain?: string | undefined;
}

// ---- directories ----

/**
 * The directories whose SCIM token has one of these SHA-256 hashes (one probe of the unique
 * `token_hash` index each), as a subquery `d` of another store's statement: the SCIM caller's
 * principal joins its environment in the same statement.
 */
export function directoriesWithTokenHashes(db: Db, tokenHashes: string[]) {
  return db
    .select({
      tokenHash: directories.tokenHash,
      directoryId: directories.id,
      organizationId: directories.organizationId,
      state: directories.state,
      environmentId: directories.environmentId,
    })
    .from(directories)
    .where(inArray(directories.tokenHash, tokenHashes))
    .as('d');
}

/** One page of the environment's directories, optionally of one organization or matching a name. */
export function pageOfDirectories(db: Db, environmentId: string, params: PageParams, filter: DirectoryFilter) {
  return paginate(
    params,
    directories.id,
    (q) =>
      db
        .select()
        .from(directories)
        .where(
          and(
            eq(directories.environmentId, environmentId),
            filter.organizationId === undefined ? undefined : eq(directories.organizationId, filter.organizationId),
            filter.search === undefined ? undefined : ilike(directories.name, containsPattern(filter.search)),
            filter.domain === undefined ? undefined : eq(directories.domain, filter.domain),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The directory of the environment, or 404; `lock` holds it in the caller's transaction. */
export function loadDirectory(db: Db, environmentId: string, id: string, lock?: 'update' | 'key share') {
  return loadScoped(db, directories, 'directory', environmentId, id, lock);
}

/** The directory whose SCIM token has this SHA-256, whatever its environment (SCIM authentication). */
export async function directoryByTokenHash(db: Db, tokenHash: string): Promise<DirectoryRow | undefined> {
  const [row] = await db.select().from(directories).where(eq(directories.tokenHash, tokenHash)).limit(1);
  return row;
}

export async function insertDirectory(tx: Db, values: NewDirectory): Promise<DirectoryRow> {
  const [row] = await tx.insert(directories).values(values).returning();
  return row as DirectoryRow;
}

export async function updateDirectory(
  tx: Db,
  environmentId: string,
  id: string,
  changes: Partial<NewDirectory>,
): Promise<DirectoryRow | undefined> {
  const [row] = await tx
    .update(directories)
    .set(changes)
    .where(scopedId(directories, environmentId, id))
    .returning();
  return row;
}

/** Deletes the directory (its users, groups and group members cascade); the row as it was. */
export async function deleteDirectoryRow(tx: Db, environmentId: string, id: string): Promise<DirectoryRow | undefined> {
  const [row] = await tx
    .delete(directories)
    .where(scopedId(directories, environmentId, id))
    .returning();
  return row;
}

/** Active and inactive user counts and the group count of each directory named. */
export async function directoryCounts(
  db: Db,
  directoryIds: string[],
): Promise<Map<string, { active: number; inactive: number; groups: number }>> {
  const counts = new Map<string, { active: number; inactive: number; groups: number }>();
  if (directoryIds.length === 0) return counts;
  for (const id of directoryIds) counts.set(id, { active: 0, inactive: 0, groups: 0 });
  const userRows = await db
    .select({
      directoryId: directoryUsers.directoryId,
      active: sql<number>`count(*) filter (where ${directoryUsers.state} = 'active')::int`,
      inactive: sql<number>`count(*) filter (where ${directoryUsers.state} <> 'active')::int`,
    })
    .from(directoryUsers)
    .where(inArray(directoryUsers.directoryId, directoryIds))
    .groupBy(directoryUsers.directoryId);
  for (const row of userRows) {
    const entry = counts.get(row.directoryId);
    if (entry) Object.assign(entry, { active: row.active, inactive: row.inactive });
  }
  const groupRows = await db
    .select({ directoryId: directoryGroups.directoryId, groups: sql<number>`count(*)::int` })
    .from(directoryGroups)
    .where(inArray(directoryGroups.directoryId, directoryIds))
    .groupBy(directoryGroups.directoryId);
  for (const row of groupRows) {
    const entry = counts.get(row.directoryId);
    if (entry) entry.groups = row.groups;
  }
  return counts;
}

// ---- directory users ----

/** The directory user of a directory, or undefined. */
export async function findDirectoryUser(
  db: Db,
  directoryId: string,
  id: string,
  lock?: 'update',
): Promise<DirectoryUserRow | undefined> {
  const query = db
    .select()
    .from(directoryUsers)
    .where(and(eq(directoryUsers.directoryId, directoryId), eq(directoryUsers.id, id)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

/** The directory user of the environment, or 404 (the REST API names it by id alone). */
export function loadDirectoryUser(db: Db, environmentId: string, id: string) {
  return loadScoped(db, directoryUsers, 'directory_user', environmentId, id);
}

/** A quota shard a write tries first for its place (quota.ts `drawDirectoryPlace`): kind, shard and its cap. */
export interface QuotaPlace {
  kind: DirectoryQuotaKind;
  shard: number;
  cap: number;
}

/**
 * Inserts directory users and, in the same statement (one round trip of a SCIM create, or of a
 * batch of them), adds their number to the quota shard `place` names when it stays within its
 * cap. `placed` false: the shard is full or not made yet, and the caller takes their places
 * otherwise (`takeDirectoryPlace`). The rows go as one JSON parameter; rendered once. The rows
 * answered are the ones given, at the version the table starts them at.
 */
export async function insertDirectoryUsers(
  tx: Db,
  values: Omit<DirectoryUserRow, 'version'>[],
  place: QuotaPlace,
): Promise<{ rows: DirectoryUserRow[]; placed: boolean }> {
  const inserted = await insertDirectoryUsersStatement<{ id: string; version: number; placed: number }>(tx, {
    rows: JSON.stringify(
      values.map((v) => ({
        id: v.id,
        environment_id: v.environmentId,
        directory_id: v.directoryId,
        organization_id: v.organizationId,
        user_name: v.userName,
        external_id: v.externalId,
        email: v.email,
        first_name: v.firstName,
        last_name: v.lastName,
        state: v.state,
        attributes: v.attributes,
        custom_attributes: v.customAttributes,
        user_id: v.userId,
        created_at: v.createdAt,
        updated_at: v.updatedAt,
      })),
    ),
    directory: values[0]?.directoryId,
    kind: place.kind,
    shard: place.shard,
    cap: place.cap,
    n: values.length,
  });
  const versions = new Map(inserted.map((r) => [r.id, Number(r.version)]));
  const rows = values.map((v) => Object.assign({}, v, { version: versions.get(v.id) ?? 1 }));
  return { rows, placed: Number(inserted[0]?.placed ?? 0) > 0 };
}

const insertDirectoryUsersStatement = renderedOnce(
  ['rows', 'directory', 'kind', 'shard', 'cap', 'n'] as const,
  (v) => sql`with placed as (
      update ${directoryQuotaShards} set count = count + ${v.n}::int
      where directory_id = ${v.directory} and kind = ${v.kind} and shard = ${v.shard}
        and count + ${v.n}::int <= ${v.cap}::int
      returning 1)
    insert into ${directoryUsers} (id, environment_id, directory_id, organization_id, user_name, external_id, email,
      first_name, last_name, state, attributes, custom_attributes, user_id, created_at, updated_at)
    select u.id, u.environment_id, u.directory_id, u.organization_id, u.user_name, u.external_id, u.email,
      u.first_name, u.last_name, u.state, u.attributes, u.custom_attributes, u.user_id, u.created_at, u.updated_at
    from jsonb_to_recordset(${v.rows}::jsonb) as u(id text, environment_id text, directory_id text,
      organization_id text, user_name text, external_id text, email text, first_name text, last_name text,
      state text, attributes jsonb, custom_attributes jsonb, user_id text, created_at timestamptz,
      updated_at timestamptz)
    returning id, version, (select count(*) from placed)::int as placed`,
);

export async function updateDirectoryUser(
  tx: Db,
  directoryId: string,
  id: string,
  changes: Partial<NewDirectoryUser>,
): Promise<DirectoryUserRow | undefined> {
  const [row] = await tx
    .update(directoryUsers)
    .set({ ...changes, version: sql`${directoryUsers.version} + 1` })
    .where(and(eq(directoryUsers.directoryId, directoryId), eq(directoryUsers.id, id)))
    .returning();
  return row;
}

export async function deleteDirectoryUserRow(
  tx: Db,
  directoryId: string,
  id: string,
): Promise<DirectoryUserRow | undefined> {
  const [row] = await tx
    .delete(directoryUsers)
    .where(and(eq(directoryUsers.directoryId, directoryId), eq(directoryUsers.id, id)))
    .returning();
  return row;
}

/** One page of the environment's directory users, of one directory and/or one group. */
export function pageOfDirectoryUsers(
  db: Db,
  environmentId: string,
  params: PageParams,
  filter: { directoryId?: string | undefined; groupId?: string | undefined },
) {
  return paginate(
    params,
    directoryUsers.id,
    (q) =>
      db
        .select()
        .from(directoryUsers)
        .where(
          and(
            eq(directoryUsers.environmentId, environmentId),
            filter.directoryId === undefined ? undefined : eq(directoryUsers.directoryId, filter.directoryId),
            filter.groupId === undefined
              ? undefined
              : sql`exists (select 1 from ${directoryGroupMembers} where ${directoryGroupMembers.groupId} = ${filter.groupId} and ${directoryGroupMembers.directoryUserId} = ${directoryUsers.id})`,
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

// ---- directory groups ----

export async function findDirectoryGroup(
  db: Db,
  directoryId: string,
  id: string,
  lock?: 'update',
): Promise<DirectoryGroupRow | undefined> {
  const query = db
    .select()
    .from(directoryGroups)
    .where(and(eq(directoryGroups.directoryId, directoryId), eq(directoryGroups.id, id)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

export function loadDirectoryGroup(db: Db, environmentId: string, id: string) {
  return loadScoped(db, directoryGroups, 'directory_group', environmentId, id);
}

export async function insertDirectoryGroup(tx: Db, values: NewDirectoryGroup): Promise<DirectoryGroupRow> {
  const [row] = await tx.insert(directoryGroups).values(values).returning();
  return row as DirectoryGroupRow;
}

export async function updateDirectoryGroup(
  tx: Db,
  directoryId: string,
  id: string,
  changes: Partial<NewDirectoryGroup>,
): Promise<DirectoryGroupRow | undefined> {
  const [row] = await tx
    .update(directoryGroups)
    .set({ ...changes, version: sql`${directoryGroups.version} + 1` })
    .where(and(eq(directoryGroups.directoryId, directoryId), eq(directoryGroups.id, id)))
    .returning();
  return row;
}

export async function deleteDirectoryGroupRow(
  tx: Db,
  directoryId: string,
  id: string,
): Promise<DirectoryGroupRow | undefined> {
  const [row] = await tx
    .delete(directoryGroups)
    .where(and(eq(directoryGroups.directoryId, directoryId), eq(directoryGroups.id, id)))
    .returning();
  return row;
}

/** One page of the environment's directory groups, of one directory and/or with one user as member. */
export function pageOfDirectoryGroups(
  db: Db,
  environmentId: string,
  params: PageParams,
  filter: { directoryId?: string | undefined; directoryUserId?: string | undefined },
) {
  return paginate(
    params,
    directoryGroups.id,
    (q) =>
      db
        .select()
        .from(directoryGroups)
        .where(
          and(
            eq(directoryGroups.environmentId, environmentId),
            filter.directoryId === undefined ? undefined : eq(directoryGroups.directoryId, filter.directoryId),
            filter.directoryUserId === undefined
              ? undefined
              : sql`exists (select 1 from ${directoryGroupMembers} where ${directoryGroupMembers.directoryUserId} = ${filter.directoryUserId} and ${directoryGroupMembers.groupId} = ${directoryGroups.id})`,
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The groups each of these directory users is a member of (a user list's `groups`). */
export async function groupsOfDirectoryUsers(
  db: Db,
  directoryUserIds: string[],
): Promise<Map<string, DirectoryGroupRow[]>> {
  const byUser = new Map<string, DirectoryGroupRow[]>();
  if (directoryUserIds.length === 0) return byUser;
  const rows = await db
    .select({ userId: directoryGroupMembers.directoryUserId, group: directoryGroups })
    .from(directoryGroupMembers)
    .innerJoin(directoryGroups, eq(directoryGroups.id, directoryGroupMembers.groupId))
    .where(inArray(directoryGroupMembers.directoryUserId, directoryUserIds))
    .orderBy(directoryGroups.id);
  for (const row of rows) {
    const list = byUser.get(row.userId) ?? [];
    list.push(row.group);
    byUser.set(row.userId, list);
  }
  return byUser;
}

/** Adds members to a group (those already in it are left as they are); the ids actually added. */
export async function addDirectoryGroupMembers(
  tx: Db,
  environmentId: string,
  groupId: string,
  directoryUserIds: string[],
): Promise<string[]> {
  if (directoryUserIds.length === 0) return [];
  const rows = await tx
    .insert(directoryGroupMembers)
    .values(directoryUserIds.map((directoryUserId) => ({ environmentId, groupId, directoryUserId })))
    .onConflictDoNothing()
    .returning({ id: directoryGroupMembers.directoryUserId });
  return rows.map((row) => row.id);
}

/** Removes members from a group; the ids actually removed. */
export async function removeDirectoryGroupMembers(
  tx: Db,
  groupId: string,
  directoryUserIds: string[],
): Promise<string[]> {
  if (directoryUserIds.length === 0) return [];
  const rows = await tx
    .delete(directoryGroupMembers)
    .where(
      and(eq(directoryGroupMembers.groupId, groupId), inArray(directoryGroupMembers.directoryUserId, directoryUserIds)),
    )
    .returning({ id: directoryGroupMembers.directoryUserId });
  return rows.map((row) => row.id);
}

/** The directory user ids that are members of the group. */
export async function memberIdsOfDirectoryGroup(db: Db, groupId: string): Promise<string[]> {
  const rows = await db
    .select({ id: directoryGroupMembers.directoryUserId })
    .from(directoryGroupMembers)
    .where(eq(directoryGroupMembers.groupId, groupId))
    .orderBy(directoryGroupMembers.directoryUserId);
  return rows.map((row) => row.id);
}

/** Of these ids, those that name users of the directory (a group may hold only its own directory's users). */
export async function existingDirectoryUserIds(db: Db, directoryId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: directoryUsers.id })
    .from(directoryUsers)
    .where(and(eq(directoryUsers.directoryId, directoryId), inArray(directoryUsers.id, ids)));
  return new Set(rows.map((row) => row.id));
}

// ---- provisioning (directories/provisioning.ts) ----

/** The directory's users with these ids, in id order. */
export function directoryUsersWithIds(db: Db, directoryId: string, ids: string[]): Promise<DirectoryUserRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(directoryUsers)
    .where(and(eq(directoryUsers.directoryId, directoryId), inArray(directoryUsers.id, ids)))
    .orderBy(directoryUsers.id);
}

/**
 * The roles that the mapped groups of the organization's directories give these Atrium users:
 * every (user, role) pair once, with the role's slug (the order roles are given in).
 */
export async function mappedRolesOfUsers(
  db: Db,
  organizationId: string,
  userIds: string[],
): Promise<{ userId: string; roleId: string; slug: string }[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectDistinct({
      userId: sql<string>`${directoryUsers.userId}`,
      roleId: sql<string>`${directoryGroups.roleId}`,
      slug: roleSlugById(directoryGroups.roleId),
    })
    .from(directoryUsers)
    .innerJoin(directoryGroupMembers, eq(directoryGroupMembers.directoryUserId, directoryUsers.id))
    .innerJoin(directoryGroups, eq(directoryGroups.id, directoryGroupMembers.groupId))
    .where(
      and(
        eq(directoryUsers.organizationId, organizationId),
        inArray(directoryUsers.userId, userIds),
        isNotNull(directoryGroups.roleId),
      ),
    );
  return rows.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

/**
 * The slugs of the roles each of these directory users gets from its groups that map to one
 * (upstream's `DirectoryUser.roles`), each once, ordered by slug; a user in no mapped group is absent.
 */
export async function roleSlugsOfDirectoryUsers(db: Db, directoryUserIds: string[]): Promise<Map<string, string[]>> {
  const byUser = new Map<string, string[]>();
  if (directoryUserIds.length === 0) return byUser;
  const rows = await db
    .selectDistinct({ id: directoryGroupMembers.directoryUserId, slug: roleSlugById(directoryGroups.roleId) })
    .from(directoryGroupMembers)
    .innerJoin(directoryGroups, eq(directoryGroups.id, directoryGroupMembers.groupId))
    .where(and(inArray(directoryGroupMembers.directoryUserId, directoryUserIds), isNotNull(directoryGroups.roleId)));
  for (const row of rows) {
    const list = byUser.get(row.id) ?? [];
    list.push(row.slug);
    byUser.set(row.id, list);
  }
  // Ordered as mappedRolesOfUsers orders a membership's roles, so `role` is the membership's too.
  for (const list of byUser.values()) list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return byUser;
}

/**
 * Of these Atrium users, those an active directory user of the organization still provisions
 * (in a directory that is not being deleted): their membership stays when another goes.
 */
export async function usersStillProvisioned(db: Db, organizationId: string, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ userId: sql<string>`${directoryUsers.userId}` })
    .from(directoryUsers)
    .innerJoin(directories, eq(directories.id, directoryUsers.directoryId))
    .where(
      and(
        eq(directoryUsers.organizationId, organizationId),
        inArray(directoryUsers.userId, userIds),
        eq(directoryUsers.state, 'active'),
        ne(directories.state, 'deleting'),
      ),
    );
  return new Set(rows.map((row) => row.userId));
}

/** The Atrium users that the group's members provision. */
export async function provisionedUsersOfGroup(db: Db, groupId: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ userId: sql<string>`${directoryUsers.userId}` })
    .from(directoryGroupMembers)
    .innerJoin(directoryUsers, eq(directoryUsers.id, directoryGroupMembers.directoryUserId))
    .where(and(eq(directoryGroupMembers.groupId, groupId), isNotNull(directoryUsers.userId)));
  return rows.map((row) => row.userId);
}

/** The directory's first SCIM write: `unlinked` becomes `linked`, once (the row, else undefined). */
export async function linkDirectory(
  tx: Db,
  environmentId: string,
  id: string,
  now: Date,
): Promise<DirectoryRow | undefined> {
  const [row] = await tx
    .update(directories)
    .set({ state: 'linked', lastSyncAt: now, updatedAt: now })
    .where(and(scopedId(directories, environmentId, id), eq(directories.state, 'unlinked')))
    .returning();
  return row;
}

/**
 * Records a SCIM write at `now` when the last one recorded is older than `resolutionMs`: a bulk
 * sync's writes do not all queue on the directory's row to say the same thing. Answers whether it did.
 */
export async function noteDirectorySync(
  tx: Db,
  environmentId: string,
  id: string,
  now: Date,
  resolutionMs: number,
): Promise<boolean> {
  const rows = await tx
    .update(directories)
    .set({ lastSyncAt: now })
    .where(
      and(
        scopedId(directories, environmentId, id),
        or(isNull(directories.lastSyncAt), lt(directories.lastSyncAt, new Date(now.getTime() - resolutionMs))),
      ),
    )
    .returning({ id: directories.id });
  return rows.length > 0;
}

/** Deletes up to `limit` of the directory's users (their group memberships cascade); those deleted. */
export function deleteSomeDirectoryUsers(tx: Db, directoryId: string, limit: number) {
  return tx
    .delete(directoryUsers)
    .where(
      inArray(
        directoryUsers.id,
        tx
          .select({ id: directoryUsers.id })
          .from(directoryUsers)
          .where(eq(directoryUsers.directoryId, directoryId))
          .orderBy(directoryUsers.id)
          .limit(limit),
      ),
    )
    .returning({ id: directoryUsers.id, userId: directoryUsers.userId });
}

/** Deletes up to `limit` of the directory's groups (their members cascade); how many. */
export async function deleteSomeDirectoryGroups(tx: Db, directoryId: string, limit: number): Promise<number> {
  const rows = await tx
    .delete(directoryGroups)
    .where(
      inArray(
        directoryGroups.id,
        tx
          .select({ id: directoryGroups.id })
          .from(directoryGroups)
          .where(eq(directoryGroups.directoryId, directoryId))
          .orderBy(directoryGroups.id)
          .limit(limit),
      ),
    )
    .returning({ id: directoryGroups.id });
  return rows.length;
}

/** Maps the group to a role (or none); not a SCIM change: the version stays. */
export async function setGroupRole(tx: Db, id: string, roleId: string | null): Promise<void> {
  await tx.update(directoryGroups).set({ roleId }).where(eq(directoryGroups.id, id));
}

// ---- the operator's lookups and the group -> role mapping (admin surface) ----

/** The environment of a directory, whatever it is (the admin surface names a directory by id alone). */
export async function environmentIdOfDirectory(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db
    .select({ environmentId: directories.environmentId })
    .from(directories)
    .where(eq(directories.id, id))
    .limit(1);
  return row?.environmentId;
}

/** The environment of a directory group, whatever it is. */
export async function environmentIdOfDirectoryGroup(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db
    .select({ environmentId: directoryGroups.environmentId })
    .from(directoryGroups)
    .where(eq(directoryGroups.id, id))
    .limit(1);
  return row?.environmentId;
}

/** The slug of the role each of these groups maps to (groups without one are absent). */
export async function roleSlugsOfDirectoryGroups(db: Db, groupIds: string[]): Promise<Map<string, string>> {
  const slugs = new Map<string, string>();
  if (groupIds.length === 0) return slugs;
  const rows = await db
    .select({ groupId: directoryGroups.id, slug: roleSlugById(directoryGroups.roleId) })
    .from(directoryGroups)
    .where(and(inArray(directoryGroups.id, groupIds), isNotNull(directoryGroups.roleId)));
  for (const row of rows) slugs.set(row.groupId, row.slug);
  return slugs;
}

// ---- quota shards (quota.ts) ----

/**
 * Adds `amount` (one, or a batch's users) to a shard of the directory's counter when it stays
 * within `cap` (creating it at `amount`); false when it would not. Only the shard it adds to is
 * locked (until the caller's transaction ends): a full shard is passed over without a lock, so a
 * create holds at most one shard and creates cannot deadlock on them. `triedUpdate`: the caller's
 * statement just tried the update (`insertDirectoryUsers`), so this starts at the insert.
 */
export async function takeQuotaShard(
  tx: Db,
  environmentId: string,
  directoryId: string,
  kind: DirectoryQuotaKind,
  shard: number,
  cap: number,
  triedUpdate = false,
  amount = 1,
): Promise<boolean> {
  if (amount > cap) return false;
  const add = async () => {
    const rows = await tx
      .update(directoryQuotaShards)
      .set({ count: sql`${directoryQuotaShards.count} + ${amount}` })
      .where(
        and(
          eq(directoryQuotaShards.directoryId, directoryId),
          eq(directoryQuotaShards.kind, kind),
          eq(directoryQuotaShards.shard, shard),
          lte(directoryQuotaShards.count, cap - amount),
        ),
      )
      .returning({ count: directoryQuotaShards.count });
    return rows.length > 0;
  };
  if (!triedUpdate && (await add())) return true;
  const created = await tx
    .insert(directoryQuotaShards)
    .values({ environmentId, directoryId, kind, shard, count: amount })
    .onConflictDoNothing()
    .returning({ count: directoryQuotaShards.count });
  if (created.length > 0) return true;
  // Absent at the update, created by a concurrent create (committed now: the insert waited for it).
  return add();
}

/** Takes one from a shard of the directory's counter that is above zero; false when it is at zero (or absent). */
export async function releaseQuotaShard(
  tx: Db,
  directoryId: string,
  kind: DirectoryQuotaKind,
  shard: number,
): Promise<boolean> {
  const rows = await tx
    .update(directoryQuotaShards)
    .set({ count: sql`${directoryQuotaShards.count} - 1` })
    .where(
      and(
        eq(directoryQuotaShards.directoryId, directoryId),
        eq(directoryQuotaShards.kind, kind),
        eq(directoryQuotaShards.shard, shard),
        sql`${directoryQuotaShards.count} > 0`,
      ),
    )
    .returning({ count: directoryQuotaShards.count });
  return rows.length > 0;
}

/** Refuses a directory that would take the organization past `directoriesPerOrganization`; the caller holds its row. */
export function assertBelowDirectoriesPerOrganization(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  return assertBelowParentQuota(
    tx,
    scope,
    'directoriesPerOrganization',
    { table: directories, parent: directories.organizationId },
    organizationId,
  );
}
