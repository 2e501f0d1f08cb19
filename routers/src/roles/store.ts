import { type Db, lockEnvironment, membershipRoles, perHandle, rolePermissions, roles } from '@atrium/db';
import { and, asc, eq, getTableColumns, inArray, isNull, or, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { RowLock } from '../common/store.ts';
import type { Deps } from '../kernel/deps.ts';
import type { Scope } from '../kernel/scope.ts';
import { organizationIn } from '../organizations/store.ts';
import {
  insertPermissions,
  type NewPermission,
  permissionIdsWithSlug,
  permissionSlugSetAmong,
  permissionSlugsAmong,
} from '../permissions/store.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';
import { assertBelowQuota } from '../quotas.ts';

export type RoleRow = typeof roles.$inferSelect & { permissions: string[] };
export type NewRole = typeof roles.$inferInsert;

/** A JSON array as the driver hands it: parsed already (PGlite) or as text (postgres.js). */
const jsonArray = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : value) as string[];

/**
 * Role columns plus the slugs of its permissions (in slug order), for every read of a role. The
 * outer row is named in full: drizzle leaves columns of a one-table select unqualified.
 */
const roleColumns = {
  ...getTableColumns(roles),
  permissions: sql<string[]>`${permissionSlugsAmong(
    sql`select rp.permission_id from ${rolePermissions} rp where rp.role_id = "roles"."id"`,
  )}`.mapWith(jsonArray),
};

/** Roles matching `where` (which must carry the environment), in priority (creation) order. */
async function selectRoles(db: Db, where: SQL | undefined, lock?: RowLock): Promise<RoleRow[]> {
  const query = db.select(roleColumns).from(roles).where(where).orderBy(asc(roles.id));
  return lock ? await query.for(lock, { of: roles }) : await query;
}

const environmentRole = (environmentId: string) =>
  and(eq(roles.environmentId, environmentId), isNull(roles.organizationId));
const ofOrganization = (environmentId: string, organizationId: string) =>
  and(eq(roles.environmentId, environmentId), eq(roles.organizationId, organizationId));

export function environmentRoleRows(db: Db, environmentId: string): Promise<RoleRow[]> {
  return selectRoles(db, environmentRole(environmentId));
}

/**
 * The environment's roles and the organization's own, in priority order (shadowing is the
 * service's); none when the organization is not in the environment, so that one statement both
 * checks it and reads its roles.
 */
export async function rolesForOrganization(db: Db, environmentId: string, organizationId: string): Promise<RoleRow[]> {
  return organizationRolesRead(db).execute({ env: environmentId, org: organizationId });
}

/** `rolesForOrganization` prepared once per handle: the members list and the roles widget read it on every request. */
const organizationRolesRead = perHandle((db: Db) => {
  const env = sql.placeholder('env');
  const org = sql.placeholder('org');
  return db
    .select(roleColumns)
    .from(roles)
    .where(
      and(
        eq(roles.environmentId, env),
        or(isNull(roles.organizationId), eq(roles.organizationId, org)),
        organizationIn(env, org),
      ),
    )
    .orderBy(asc(roles.id))
    .prepare('roles_of_organization');
});

/** The environment role (organizationId null) or the organization's own role with this slug, if any. */
export async function findRole(
  db: Db,
  environmentId: string,
  organizationId: string | null,
  slug: string,
  lock?: RowLock,
): Promise<RoleRow | undefined> {
  const owner =
    organizationId === null ? environmentRole(environmentId) : ofOrganization(environmentId, organizationId);
  const [row] = await selectRoles(db, and(owner, eq(roles.slug, slug)), lock);
  return row;
}

/** The environment's default role. */
export async function defaultRole(db: Db, environmentId: string, lock?: RowLock): Promise<RoleRow | undefined> {
  const [row] = await selectRoles(db, and(environmentRole(environmentId), eq(roles.isDefault, true)), lock);
  return row;
}

/**
 * The roles named by `slugs` that apply to the organization (environment roles and its own),
 * held FOR KEY SHARE: a concurrent delete of one waits until the caller commits.
 */
export function lockRolesNamed(
  tx: Db,
  environmentId: string,
  organizationId: string,
  slugs: string[],
): Promise<Array<{ id: string; slug: string; organizationId: string | null }>> {
  return tx
    .select({ id: roles.id, slug: roles.slug, organizationId: roles.organizationId })
    .from(roles)
    .where(
      and(
        eq(roles.environmentId, environmentId),
        inArray(roles.slug, slugs),
        or(isNull(roles.organizationId), eq(roles.organizationId, organizationId)),
      ),
    )
    .for('key share');
}

/**
 * Inserts a role. An environment role counts against the environment's quota (serialised on
 * the environment row here); an organization role's caller holds its organization's row.
 */
export async function insertRole(tx: Db, deps: Deps, values: NewRole): Promise<RoleRow> {
  if (!values.organizationId) {
    await lockEnvironment(tx, values.environmentId);
    await assertBelowQuota(tx, deps, 'rolesPerEnvironment', roles, environmentRole(values.environmentId));
  }
  const [row] = await tx.insert(roles).values(values).returning();
  return { ...(row as typeof roles.$inferSelect), permissions: [] };
}

/** The roles every environment starts with, in one statement: `member` (the default) and `admin`. */
export async function insertDefaultRoles(tx: Db, values: NewRole[]): Promise<void> {
  await tx.insert(roles).values(values);
}

export async function updateRoleRow(
  tx: Db,
  id: string,
  changes: Partial<Pick<NewRole, 'name' | 'description' | 'updatedAt' | 'isDefault'>>,
): Promise<void> {
  await tx.update(roles).set(changes).where(eq(roles.id, id));
}

/** A new environment's system permissions, all given to `roleId` (its `admin`). */
export async function insertSystemPermissions(tx: Db, roleId: string, values: NewPermission[]): Promise<void> {
  if (values.length === 0) return;
  await insertPermissions(tx, values);
  await tx
    .insert(rolePermissions)
    .values(values.map((p) => ({ environmentId: p.environmentId, roleId, permissionId: p.id })));
}

/** Replaces the role's permissions with these. */
export async function replaceRolePermissions(
  tx: Db,
  environmentId: string,
  roleId: string,
  permissionIds: string[],
): Promise<void> {
  await tx.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId));
  if (permissionIds.length === 0) return;
  await tx
    .insert(rolePermissions)
    .values(permissionIds.map((permissionId) => ({ environmentId, roleId, permissionId })))
    .onConflictDoNothing();
}

/** Gives the role one permission; false when it had it already. */
export async function addRolePermissionRow(
  tx: Db,
  environmentId: string,
  roleId: string,
  permissionId: string,
): Promise<boolean> {
  const added = await tx
    .insert(rolePermissions)
    .values({ environmentId, roleId, permissionId })
    .onConflictDoNothing()
    .returning({ roleId: rolePermissions.roleId });
  return added.length > 0;
}

/** Takes one permission from the role; false when it did not have it. */
export async function removeRolePermissionRow(tx: Db, roleId: string, permissionSlug: string): Promise<boolean> {
  const removed = await tx
    .delete(rolePermissions)
    .where(
      and(
        eq(rolePermissions.roleId, roleId),
        sql`${rolePermissions.permissionId} in (${permissionIdsWithSlug(rolePermissions.environmentId, permissionSlug)})`,
      ),
    )
    .returning({ roleId: rolePermissions.roleId });
  return removed.length > 0;
}

/**
 * The roles holding a permission, held FOR UPDATE (the caller is about to take the permission
 * from them), in id order so concurrent callers lock them alike.
 */
export function lockRolesHolding(tx: Db, permissionId: string): Promise<RoleRow[]> {
  return selectRoles(
    tx,
    sql`${roles.id} in (select ${rolePermissions.roleId} from ${rolePermissions} where ${rolePermissions.permissionId} = ${permissionId})`,
    'update',
  );
}

/** Whether any membership holds the role. */
export async function roleInUse(tx: Db, roleId: string): Promise<boolean> {
  const [row] = await tx
    .select({ roleId: membershipRoles.roleId })
    .from(membershipRoles)
    .where(eq(membershipRoles.roleId, roleId))
    .limit(1);
  return row !== undefined;
}

/** Refuses an organization role that would take the organization past `rolesPerOrganization`; the caller holds its row. */
export function assertBelowRolesPerOrganization(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  const counted = { table: roles, parent: roles.organizationId };
  return assertBelowParentQuota(tx, scope, 'rolesPerOrganization', counted, organizationId);
}

/** Deletes the role (its permission links go with it); the caller has checked it is unused. */
export async function deleteRoleRow(tx: Db, id: string): Promise<void> {
  await tx.delete(roles).where(eq(roles.id, id));
}

/** Moves the environment's default to `roleId` (two statements: the unique index is checked per row). */
export async function moveDefaultRole(tx: Db, environmentId: string, roleId: string, now: Date): Promise<void> {
  await lockEnvironment(tx, environmentId);
  await tx
    .update(roles)
    .set({ isDefault: false, updatedAt: now })
    .where(and(environmentRole(environmentId), eq(roles.isDefault, true)));
  await tx.update(roles).set({ isDefault: true, updatedAt: now }).where(eq(roles.id, roleId));
}

// ---- the roles of memberships ----

/** Gives the membership these roles, in order (replacing any it held). */
export async function replaceMembershipRoles(
  tx: Db,
  environmentId: string,
  membershipId: string,
  roleIds: string[],
): Promise<void> {
  await tx.delete(membershipRoles).where(eq(membershipRoles.organizationMembershipId, membershipId));
  await tx
    .insert(membershipRoles)
    .values(
      roleIds.map((roleId, position) => ({ environmentId, organizationMembershipId: membershipId, roleId, position })),
    );
}

/** The role ids each of these memberships holds, in order. */
export async function roleIdsOfMemberships(db: Db, ids: string[]): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  if (ids.length === 0) return held;
  const rows = await db
    .select({ id: membershipRoles.organizationMembershipId, roleId: membershipRoles.roleId })
    .from(membershipRoles)
    .where(inArray(membershipRoles.organizationMembershipId, ids))
    .orderBy(membershipRoles.organizationMembershipId, membershipRoles.position);
  for (const row of rows) {
    const list = held.get(row.id) ?? [];
    list.push(row.roleId);
    held.set(row.id, list);
  }
  return held;
}

/** Replaces the roles of many memberships (each its role ids, in order): two statements. */
export async function replaceRolesOfMembershipRows(
  tx: Db,
  environmentId: string,
  wanted: Map<string, string[]>,
): Promise<void> {
  await tx.delete(membershipRoles).where(inArray(membershipRoles.organizationMembershipId, [...wanted.keys()]));
  const values = [...wanted].flatMap(([organizationMembershipId, roleIds]) =>
    roleIds.map((roleId, position) => ({ environmentId, organizationMembershipId, roleId, position })),
  );
  if (values.length > 0) await tx.insert(membershipRoles).values(values);
}

// ---- fragments of other stores' statements ----

/**
 * The environment's default role's slug as a one-element JSON array (null without a default
 * role): a scalar subquery of another store's statement. `environmentId` is a column or a value.
 */
export function defaultRoleSlugs(environmentId: SQL): SQL {
  return sql`(select jsonb_build_array(r.slug) from ${roles} r
    where r.environment_id = ${environmentId} and r.organization_id is null and r.is_default)`;
}

/**
 * The slugs of a membership's roles, in order; a membership without any (none is written so)
 * shows the environment's default role. `membershipId` and `environmentId` name the membership's
 * columns, or a value: a statement of one environment passes it as a value, so that the default
 * role is read once per statement rather than once per row.
 */
export function roleSlugsOf(membershipId: SQL, environmentId: SQL) {
  return sql<string[]>`coalesce(
  (select jsonb_agg(r.slug order by mr.position) from ${membershipRoles} mr join ${roles} r on r.id = mr.role_id
    where mr.organization_membership_id = ${membershipId}),
  ${defaultRoleSlugs(environmentId)},
  '[]'::jsonb)`.mapWith(jsonArray);
}

/** The slug of the role `roleId` names (a column of another store's statement), as a scalar subquery. */
export function roleSlugById(roleId: SQL | AnyPgColumn): SQL<string> {
  return sql<string>`(select r.slug from ${roles} r where r.id = ${roleId})`;
}

/**
 * The roles that apply in the organization (its own and the environment's) as one JSON array of
 * `{slug, name, description, own}`: uncorrelated, so PostgreSQL reads it once per statement (an
 * InitPlan), not per row. `json`, not `jsonb`: every row of the members page carries it, and
 * json's output is its text as built (bench/README.md, "The members page's statement against its floor's").
 */
export function organizationRolesJson(environmentId: SQL, organizationId: SQL): SQL {
  return sql`(select json_agg(json_build_object('slug', r.slug, 'name', r.name, 'description', r.description,
      'own', r.organization_id is not null))
    from ${roles} r where r.environment_id = ${environmentId} and (r.organization_id is null or r.organization_id = ${organizationId}))`;
}

/**
 * Gives the memberships of `inserted` (a CTE of another store's statement, with their `id`) the
 * environment's default role: a data-modifying CTE's statement, returning
 * `organization_membership_id, role_id` of the links written.
 */
export function giveDefaultRole(environmentId: SQL, inserted: SQL): SQL {
  return sql`insert into ${membershipRoles} (environment_id, organization_membership_id, role_id, position)
      select ${environmentId}, i.id, r.id, 0 from ${inserted} i
      join ${roles} r on r.environment_id = ${environmentId} and r.organization_id is null and r.is_default
      returning organization_membership_id, role_id`;
}

/**
 * The slugs of the permissions the roles of a membership (`membershipId`, a column of another
 * store's statement) grant, each once in slug order, as a JSON array; `slugLike` keeps those matching it.
 */
export function permissionSlugsOfMembership(membershipId: SQL, slugLike?: SQL): SQL {
  return permissionSlugsAmong(permissionIdsOfMembership(membershipId), slugLike);
}

/** `permissionSlugsOfMembership` as a set to check against (`permissionSlugSetAmong`: a `text[]` in no order). */
export function permissionSlugSetOfMembership(membershipId: SQL, slugLike?: SQL): SQL {
  return permissionSlugSetAmong(permissionIdsOfMembership(membershipId), slugLike);
}

/** The ids of the permissions the roles of a membership grant (with repeats), as a subquery. */
const permissionIdsOfMembership = (membershipId: SQL): SQL =>
  sql`select rp.permission_id from ${membershipRoles} mr join ${rolePermissions} rp on rp.role_id = mr.role_id
      where mr.organization_membership_id = ${membershipId}`;
