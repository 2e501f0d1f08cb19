import { type Db, lockEnvironment, type PageParams, paginate, permissions } from '@atrium/db';
import { and, eq, inArray, or, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { containsPattern } from '../common/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { assertBelowQuota } from '../quotas.ts';

export type PermissionRow = typeof permissions.$inferSelect;
export type NewPermission = typeof permissions.$inferInsert;
export type PermissionRef = { id: string; slug: string };

const bySlug = (environmentId: string, slug: string) =>
  and(eq(permissions.environmentId, environmentId), eq(permissions.slug, slug));

/** The environment's permission with this slug, if any; `lock` holds it in the caller's transaction. */
export async function findPermission(
  db: Db,
  environmentId: string,
  slug: string,
  lock?: 'update' | 'key share',
): Promise<PermissionRow | undefined> {
  const query = db.select().from(permissions).where(bySlug(environmentId, slug)).limit(1);
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

/** Inserts a permission unless the environment holds its quota of them (serialised on the environment). */
export async function insertPermission(tx: Db, deps: Deps, values: NewPermission): Promise<PermissionRow> {
  await lockEnvironment(tx, values.environmentId);
  await assertBelowQuota(
    tx,
    deps,
    'permissionsPerEnvironment',
    permissions,
    // The system permissions every environment holds do not count.
    and(eq(permissions.environmentId, values.environmentId), eq(permissions.system, false)),
  );
  const [row] = await tx.insert(permissions).values(values).returning();
  return row as PermissionRow;
}

export async function updatePermissionRow(
  tx: Db,
  id: string,
  changes: Partial<Pick<NewPermission, 'name' | 'description' | 'updatedAt'>>,
): Promise<PermissionRow> {
  const [row] = await tx.update(permissions).set(changes).where(eq(permissions.id, id)).returning();
  return row as PermissionRow;
}

/** Deletes the permission; its links to roles go with it by foreign key. */
export async function deletePermissionRow(tx: Db, id: string): Promise<void> {
  await tx.delete(permissions).where(eq(permissions.id, id));
}

/** One page of the environment's permissions, keyset on their id. */
/** One page of the environment's permissions; `search` matches slug or name (case-insensitive substring). */
export function pageOfPermissions(db: Db, environmentId: string, params: PageParams, search?: string) {
  const pattern = search ? containsPattern(search.toLowerCase()) : undefined;
  const matches = pattern
    ? or(sql`lower(${permissions.slug}) like ${pattern}`, sql`lower(${permissions.name}) like ${pattern}`)
    : undefined;
  return paginate(
    params,
    permissions.id,
    (q) =>
      db
        .select()
        .from(permissions)
        .where(and(eq(permissions.environmentId, environmentId), matches, q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The environment's permissions among `slugs`, held FOR KEY SHARE (a concurrent delete waits). */
export function lockPermissions(tx: Db, environmentId: string, slugs: string[]): Promise<PermissionRef[]> {
  if (slugs.length === 0) return Promise.resolve([]);
  return tx
    .select({ id: permissions.id, slug: permissions.slug })
    .from(permissions)
    .where(and(eq(permissions.environmentId, environmentId), inArray(permissions.slug, slugs)))
    .for('key share');
}

/** Inserts these permissions (a new environment's system permissions), in one statement. */
export async function insertPermissions(tx: Db, values: NewPermission[]): Promise<void> {
  if (values.length > 0) await tx.insert(permissions).values(values);
}

// ---- fragments of other stores' statements ----

/**
 * The slugs of the permissions whose ids `ids` (a subquery of another store's statement) selects,
 * each once in slug order, as a JSON array (empty without any); `slugLike` keeps those matching it.
 */
export function permissionSlugsAmong(ids: SQL, slugLike?: SQL): SQL {
  return sql`coalesce((select jsonb_agg(p.slug order by p.slug) from ${permissions} p where p.id in (${ids})${likeOf(slugLike)}), '[]'::jsonb)`;
}

/**
 * `permissionSlugsAmong` as a set to check against: a `text[]` in no order. For the reads on every
 * request (a widget token's held permissions) it costs PostgreSQL about 15 % less than the ordered
 * JSON (bench/README.md, "The sixteenth session").
 */
export function permissionSlugSetAmong(ids: SQL, slugLike?: SQL): SQL {
  return sql`array(select p.slug from ${permissions} p where p.id in (${ids})${likeOf(slugLike)})`;
}

/** The filter of `slugLike` on the permissions `p` of the two reads above (none without it). */
const likeOf = (slugLike: SQL | undefined): SQL => (slugLike ? sql` and p.slug like ${slugLike}` : sql``);

/** The ids of the environment's permissions with this slug (at most one), as a subquery of another store's statement. */
export function permissionIdsWithSlug(environmentId: SQL | AnyPgColumn, slug: string): SQL {
  return sql`select p.id from ${permissions} p where p.slug = ${slug} and p.environment_id = ${environmentId}`;
}
