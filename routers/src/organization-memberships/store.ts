import {
  builtOnce,
  type Db,
  type KeysetOp,
  keysetCondition,
  type MembershipStatus,
  organizationMemberships,
  type PageParams,
  paginate,
  perHandleAndKey,
  rawRows,
  renderedOnce,
} from '@atrium/db';
import { and, asc, desc, eq, getTableColumns, inArray, ne, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { loadScoped, orNotFound, qualified as q, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { organizationNames } from '../organizations/store.ts';
import { assertBelowQuota } from '../quotas.ts';
import {
  giveDefaultRole,
  permissionSlugSetOfMembership,
  permissionSlugsOfMembership,
  replaceRolesOfMembershipRows,
  roleSlugById,
  roleSlugsOf,
} from '../roles/store.ts';
import type { UserRecord, UserRow } from '../user-wire.ts';
import { joinedUser, joinUserAs, userColumns, userTupleColumns } from '../users/store.ts';

export type MembershipRow = typeof organizationMemberships.$inferSelect & {
  organizationName: string;
  roleSlugs: string[];
  /** The member, embedded in the membership's wire shape (upstream's `user`). */
  user: UserRow;
};
export type NewMembership = typeof organizationMemberships.$inferInsert;

/** A JSON array as the driver hands it: parsed already (PGlite) or as text (postgres.js). */
const jsonArray = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : value) as string[];

/** A membership row's role slugs. The outer row is named in full: drizzle leaves columns of a one-table select unqualified. */
const roleSlugs = roleSlugsOf(sql`"organization_memberships"."id"`, sql`"organization_memberships"."environment_id"`);

/** The organizations' names (organizations/store.ts), joined as `orgs` by the reads of memberships. */
const withOrganizationNames = sql`${organizationNames} orgs`;

/**
 * Membership columns plus the organization's current name, the role slugs and the user's row, for
 * every read of a membership: a select of them joins `organizations` and `users` (the same statement).
 */
export const membershipColumns = {
  ...getTableColumns(organizationMemberships),
  organizationName: sql<string>`orgs.name`,
  roleSlugs,
  user: userColumns,
};

/** Memberships matching `where` (which must carry the environment), with their organization's name and user. */
function findMemberships(db: Db, where: SQL | undefined) {
  return db
    .select(membershipColumns)
    .from(organizationMemberships)
    .innerJoin(withOrganizationNames, sql`orgs.id = ${organizationMemberships.organizationId}`)
    .innerJoin(...joinedUser(organizationMemberships.userId))
    .where(where);
}

/**
 * One membership of the environment, or 404. `lock` holds it FOR KEY SHARE: a concurrent delete
 * (or cascade) waits, so a row written that references it never meets a foreign-key violation.
 */
export async function findMembership(db: Db, environmentId: string, id: string, lock = false): Promise<MembershipRow> {
  const query = findMemberships(db, scopedId(organizationMemberships, environmentId, id));
  const [row] = lock ? await query.for('key share', { of: organizationMemberships }) : await query;
  return orNotFound(row, 'organization_membership', id);
}

/** The membership row alone, held FOR UPDATE, to change it. */
export function lockMembership(tx: Db, environmentId: string, id: string) {
  return loadScoped(tx, organizationMemberships, 'organization_membership', environmentId, id, 'update');
}

/** Every membership of a user, read before the user's deletion takes them by cascade. */
export function membershipsOfUser(db: Db, environmentId: string, userId: string): Promise<MembershipRow[]> {
  return findMemberships(
    db,
    and(eq(organizationMemberships.environmentId, environmentId), eq(organizationMemberships.userId, userId)),
  );
}

export interface MembershipFilter {
  userId?: string | undefined;
  organizationId?: string | undefined;
  statuses?: MembershipStatus[] | undefined;
}

/**
 * A membership as the list reads it: a row, or one decoded from `membershipTuple` (timestamps then
 * in PostgreSQL's JSON encoding).
 */
export type MembershipRecord = Omit<MembershipRow, 'environmentId' | 'createdAt' | 'updatedAt' | 'user'> & {
  createdAt: Date | string;
  updatedAt: Date | string;
  user: UserRecord;
};

/** `membershipTuple` as JSON gives it: positional, in the order `fromMembershipTuple` reads. */
type MembershipTuple = [
  id: string,
  userId: string,
  organizationId: string,
  organizationName: string,
  status: MembershipStatus,
  directoryManaged: boolean,
  customAttributes: MembershipRow['customAttributes'],
  createdAt: string,
  updatedAt: string,
  roleSlugs: string[],
  email: string,
  emailVerified: boolean,
  firstName: string | null,
  lastName: string | null,
  profilePictureUrl: string | null,
  locale: string | null,
  lastSignInAt: string | null,
  externalId: string | null,
  metadata: UserRecord['metadata'],
  userCreatedAt: string,
  userUpdatedAt: string,
];

/**
 * A membership with its organization's name, role slugs and user as one JSON array built by
 * PostgreSQL, as organizations' reads do (`organizationTuple`): one value per row instead of
 * Drizzle's mapping of 25 columns and a Date per timestamp (bench/README.md, "The memberships list
 * as one JSON value per row"). `env` is the environment as a value, so that the default role of a
 * membership without roles is read once per statement.
 */
const membershipTuple = (env: SQL) => {
  const m = organizationMemberships;
  return sql<MembershipTuple>`json_build_array(${q(m.id)}, ${q(m.userId)}, ${q(m.organizationId)}, orgs.name, ${q(m.status)}, ${q(m.directoryManaged)}, ${q(m.customAttributes)}, ${q(m.createdAt)}, ${q(m.updatedAt)}, ${roleSlugsOf(q(m.id), env)}, ${userTupleColumns})`;
};

/** The record of a `membershipTuple`. */
const fromMembershipTuple = (t: MembershipTuple): MembershipRecord => ({
  id: t[0],
  userId: t[1],
  organizationId: t[2],
  organizationName: t[3],
  status: t[4],
  directoryManaged: t[5],
  customAttributes: t[6],
  createdAt: t[7],
  updatedAt: t[8],
  roleSlugs: t[9],
  user: {
    id: t[1],
    email: t[10],
    emailVerified: t[11],
    firstName: t[12],
    lastName: t[13],
    profilePictureUrl: t[14],
    locale: t[15],
    lastSignInAt: t[16],
    externalId: t[17],
    metadata: t[18],
    createdAt: t[19],
    updatedAt: t[20],
  },
});

/** What decides a memberships page's statement text: which filters are on, the order, the keyset. */
type MembershipsShape = `${boolean}:${boolean}:${boolean}:${boolean}:${KeysetOp | 'first'}`;

/**
 * The page statements, prepared once per handle and shape (at most 2 × 2 × 2 × 2 × 5): the
 * memberships list is the OrganizationSwitcher's every read, where Drizzle rendering the query
 * cost a third of the request's CPU (bench/README.md).
 */
const membershipsPage = perHandleAndKey((db: Db, shape: MembershipsShape) => {
  const [user, organization, statuses, ascending, op] = shape.split(':') as [string, string, string, string, string];
  const m = organizationMemberships;
  return db
    .select({ m: membershipTuple(sql`${sql.placeholder('env')}`) })
    .from(m)
    .innerJoin(withOrganizationNames, sql`orgs.id = ${m.organizationId}`)
    .innerJoin(...joinedUser(m.userId))
    .where(
      and(
        eq(m.environmentId, sql.placeholder('env')),
        user === 'true' ? eq(m.userId, sql.placeholder('user')) : undefined,
        organization === 'true' ? eq(m.organizationId, sql.placeholder('org')) : undefined,
        statuses === 'true' ? sql`${m.status} = any(${sql.placeholder('statuses')}::text[])` : undefined,
        op === 'first' ? undefined : keysetCondition(m.id, op as KeysetOp, sql.placeholder('cursor')),
      ),
    )
    .orderBy(ascending === 'true' ? asc(m.id) : desc(m.id))
    .limit(sql.placeholder('limit'))
    .prepare(`memberships_page_${shape.replaceAll(':', '_')}`);
});

/** One page of the environment's memberships, keyset on their id. */
export function pageOfMemberships(db: Db, environmentId: string, params: PageParams, filter: MembershipFilter) {
  const statuses = filter.statuses && filter.statuses.length > 0 ? filter.statuses : undefined;
  return paginate(
    params,
    organizationMemberships.id,
    async (page) => {
      const { ascending, cursor } = page.shape;
      const shape: MembershipsShape = `${!!filter.userId}:${!!filter.organizationId}:${!!statuses}:${ascending}:${cursor?.op ?? 'first'}`;
      const rows = await membershipsPage(db, shape).execute({
        env: environmentId,
        user: filter.userId,
        org: filter.organizationId,
        statuses,
        cursor: cursor?.value,
        limit: page.limit,
      });
      return rows.map((row) => fromMembershipTuple(row.m));
    },
    (row) => row.id,
  );
}

/** The status of the user's membership of the organization, if any; `lock` holds it FOR KEY SHARE. */
export async function membershipStatus(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
  lock = false,
): Promise<MembershipStatus | undefined> {
  return (await membershipOf(db, environmentId, organizationId, userId, lock ? 'key share' : undefined))?.status;
}

/** The user's membership of the organization, by its three keys. */
function memberKey<K extends SQLWrapper | string>(environmentId: K, organizationId: K, userId: K) {
  return and(
    eq(organizationMemberships.environmentId, environmentId),
    eq(organizationMemberships.organizationId, organizationId),
    eq(organizationMemberships.userId, userId),
  );
}

/** `membershipOf` without a lock, built once: an SSO sign-in and a key's validation run it. */
const membershipOfRead = builtOnce(['env', 'org', 'user'] as const, (db, v) =>
  db
    .select({ id: organizationMemberships.id, status: organizationMemberships.status })
    .from(organizationMemberships)
    .where(memberKey(v.env, v.org, v.user))
    .limit(1),
);

/**
 * The user's membership of the organization (id and status), if any; `lock` holds it (FOR NO KEY
 * UPDATE: an API key created under it, FOR KEY SHARE: a row that only references it).
 */
export async function membershipOf(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
  lock?: 'no key update' | 'key share',
): Promise<{ id: string; status: MembershipStatus } | undefined> {
  if (!lock) {
    const [row] = await membershipOfRead(db, { env: environmentId, org: organizationId, user: userId });
    return row;
  }
  const [row] = await db
    .select({ id: organizationMemberships.id, status: organizationMemberships.status })
    .from(organizationMemberships)
    .where(memberKey(environmentId, organizationId, userId))
    .limit(1)
    .for(lock);
  return row;
}

/**
 * The organization's members (their user ids, any status) as a subquery, for a statement of
 * another store: the users list filtered by organization stays one statement.
 */
export function userIdsOfOrganization(db: Db, environmentId: string, organizationId: string) {
  return db
    .select({ id: organizationMemberships.userId })
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, environmentId),
        eq(organizationMemberships.organizationId, organizationId),
      ),
    );
}

/**
 * The role slugs of the user's membership of the organization (null without one), as a scalar
 * subquery over the outer statement's columns: an SSO profile's view reads them in its statement.
 */
export function roleSlugsOfMember(environmentId: SQL, userId: SQL, organizationId: SQL): SQL {
  return sql`(select ${roleSlugsOf(sql`m.id`, sql`m.environment_id`)} from ${organizationMemberships} m
    where m.environment_id = ${environmentId} and m.user_id = ${userId} and m.organization_id = ${organizationId}
    limit 1)`;
}

/**
 * Memberships (`membershipColumns`) reached from another resource's `table` through its column
 * naming them, with their organization and user: a group's members page in one statement.
 */
export function selectMembershipsThrough(db: Db, table: PgTable, membershipId: AnyPgColumn) {
  return db
    .select(membershipColumns)
    .from(table)
    .innerJoin(organizationMemberships, eq(organizationMemberships.id, membershipId))
    .innerJoin(withOrganizationNames, sql`orgs.id = ${organizationMemberships.organizationId}`)
    .innerJoin(...joinedUser(organizationMemberships.userId));
}

/**
 * Refuses a membership that would take the user past `membershipsPerUser`. The caller holds the
 * user's row lock that serialises them.
 */
export function assertBelowMembershipsPerUser(tx: Db, scope: Scope, userId: string): Promise<void> {
  const m = organizationMemberships;
  return assertBelowQuota(
    tx,
    scope.deps,
    'membershipsPerUser',
    m,
    and(eq(m.environmentId, scope.env.id), eq(m.userId, userId)),
  );
}

/**
 * Whether the user holds an active membership of the organization (both named by the outer
 * statement's columns, qualified here: a one-table select leaves them bare): a condition of
 * another store's statement, as the live-session read's.
 */
export function activeMembershipExists(organizationId: AnyPgColumn, userId: AnyPgColumn): SQL {
  return sql`exists (select 1 from ${organizationMemberships} om
    where om.organization_id = ${q(organizationId)} and om.user_id = ${q(userId)} and om.status = 'active')`;
}

/** Whether a directory provisions the user (any of their memberships is directory-managed): it owns their e-mail. */
export async function directoryManagesUser(db: Db, environmentId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: organizationMemberships.id })
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, environmentId),
        eq(organizationMemberships.userId, userId),
        eq(organizationMemberships.directoryManaged, true),
      ),
    )
    .limit(1);
  return row !== undefined;
}

export async function insertMembership(tx: Db, values: NewMembership) {
  const [row] = await tx.insert(organizationMemberships).values(values).returning();
  return row as typeof organizationMemberships.$inferSelect;
}

export async function touchMembership(tx: Db, id: string, now: Date): Promise<void> {
  await tx.update(organizationMemberships).set({ updatedAt: now }).where(eq(organizationMemberships.id, id));
}

export async function updateMembershipStatus(tx: Db, id: string, status: MembershipStatus, now: Date): Promise<void> {
  await tx.update(organizationMemberships).set({ status, updatedAt: now }).where(eq(organizationMemberships.id, id));
}

/** Deletes the membership (its group links go with it by foreign key); false if it was gone. */
export async function deleteMembership(tx: Db, environmentId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(organizationMemberships)
    .where(scopedId(organizationMemberships, environmentId, id))
    .returning({ id: organizationMemberships.id });
  return deleted.length > 0;
}

// ---- many memberships at once (directory provisioning) ----

/** The memberships of these users in one organization (the row alone), held FOR UPDATE in id order. */
export function lockMembershipsOfUsers(
  tx: Db,
  environmentId: string,
  organizationId: string,
  userIds: string[],
): Promise<(typeof organizationMemberships.$inferSelect)[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return tx
    .select()
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, environmentId),
        eq(organizationMemberships.organizationId, organizationId),
        inArray(organizationMemberships.userId, userIds),
      ),
    )
    .orderBy(organizationMemberships.id)
    .for('update');
}

/** Memberships by id, with their organization's name, roles and user (for their events). */
export function membershipsWithIds(db: Db, environmentId: string, ids: string[]): Promise<MembershipRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return findMemberships(
    db,
    and(eq(organizationMemberships.environmentId, environmentId), inArray(organizationMemberships.id, ids)),
  ).orderBy(organizationMemberships.id);
}

/**
 * Inserts active memberships of one organization (`id` and `userId` each; directory-managed or
 * not), skipping any the user holds already (a concurrent insert), and gives those inserted the
 * environment's default role, in one statement rendered once. Answers the ids inserted and what
 * their events show: the organization's name and the slug given (none without a default role),
 * so new memberships need not be read again. The directory's provisioning and a first SSO sign-in use it.
 */
export async function insertMembershipsWithDefaultRole(
  tx: Db,
  environmentId: string,
  organizationId: string,
  memberships: { id: string; userId: string }[],
  now: Date,
  directoryManaged: boolean,
): Promise<{ inserted: Set<string>; organizationName: string; roleSlugs: string[] }> {
  if (memberships.length === 0) return { inserted: new Set(), organizationName: '', roleSlugs: [] };
  const rows = await insertMembershipsStatement<{
    id: string;
    organization_name: string;
    slug: string | null;
  }>(tx, {
    env: environmentId,
    org: organizationId,
    now: now.toISOString(),
    managed: directoryManaged,
    rows: JSON.stringify(memberships.map((m) => ({ id: m.id, user_id: m.userId }))),
  });
  const slug = rows.find((row) => row.slug !== null)?.slug;
  return {
    inserted: new Set(rows.map((row) => row.id)),
    organizationName: rows[0]?.organization_name ?? '',
    roleSlugs: slug ? [slug] : [],
  };
}

const insertMembershipsStatement = renderedOnce(
  ['env', 'org', 'now', 'managed', 'rows'] as const,
  (v) => sql`with inserted as (
      insert into ${organizationMemberships} (id, environment_id, user_id, organization_id, status, directory_managed,
        custom_attributes, created_at, updated_at)
      select m.id, ${v.env}, m.user_id, ${v.org}, 'active', ${v.managed}::boolean, '{}'::jsonb, ${v.now}::timestamptz, ${v.now}::timestamptz
      from jsonb_to_recordset(${v.rows}::jsonb) as m(id text, user_id text)
      on conflict do nothing
      returning id),
    given as (
      ${giveDefaultRole(v.env as SQL, sql`inserted`)})
    select i.id, o.name as organization_name,
      (select ${roleSlugById(sql`g.role_id`)} from given g where g.organization_membership_id = i.id) as slug
    from inserted i join ${organizationNames} o on o.id = ${v.org}`,
);

/** Sets these memberships' status and directory management where either differs; the ids changed. */
export async function setMembershipsState(
  tx: Db,
  ids: string[],
  state: { status: MembershipStatus; directoryManaged?: boolean },
  now: Date,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const m = organizationMemberships;
  const differs =
    state.directoryManaged === undefined
      ? ne(m.status, state.status)
      : sql`(${m.status} <> ${state.status} or ${m.directoryManaged} <> ${state.directoryManaged})`;
  const rows = await tx
    .update(m)
    .set({ ...state, updatedAt: now })
    .where(and(inArray(m.id, ids), differs))
    .returning({ id: m.id });
  return rows.map((row) => row.id);
}

/** Replaces the roles of many memberships (each its role ids, in order) and marks them updated: three statements. */
export async function replaceRolesOfMemberships(
  tx: Db,
  environmentId: string,
  wanted: Map<string, string[]>,
  now: Date,
): Promise<void> {
  const ids = [...wanted.keys()];
  if (ids.length === 0) return;
  await replaceRolesOfMembershipRows(tx, environmentId, wanted);
  await tx.update(organizationMemberships).set({ updatedAt: now }).where(inArray(organizationMemberships.id, ids));
}

/**
 * The permission slugs the roles of the user's membership of the organization grant (distinct):
 * a widget token's scopes and a user API key's ceiling.
 */
export async function membershipPermissionSlugs(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<string[]> {
  const [row] = await db
    .select({
      slugs: sql<string[]>`${permissionSlugsOfMembership(q(organizationMemberships.id))}`.mapWith(jsonArray),
    })
    .from(organizationMemberships)
    .where(memberKey(environmentId, organizationId, userId))
    .limit(1);
  return row?.slugs ?? [];
}

/**
 * The widget permissions (`widgets:*` slugs) the roles of the user's **active** membership of the
 * organization grant now: no row when there is no active membership, else one row with the
 * slugs (a `text[]`, empty when its roles grant none). It runs on every use of a widget token
 * (auth/widget-token.ts), so a demotion counts from its commit; its text is rendered once
 * (`renderedOnce`) and sent prepared, without Drizzle's prepared-query wrapper on each use.
 */
const heldWidgetPermissionsRead = renderedOnce(
  ['env', 'org', 'user'] as const,
  (v) => sql`select ${permissionSlugSetOfMembership(sql`om.id`, sql`'widgets:%'`)} as slugs
    from ${organizationMemberships} om
    where om.environment_id = ${v.env} and om.organization_id = ${v.org} and om.user_id = ${v.user}
      and om.status = 'active'`,
);

/** The widget permissions the user's active membership of the organization grants now; undefined without one. */
export async function heldWidgetPermissions(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<Set<string> | undefined> {
  const [row] = await heldWidgetPermissionsRead<{ slugs: string[] }>(db, {
    env: environmentId,
    org: organizationId,
    user: userId,
  });
  return row ? new Set(row.slugs) : undefined;
}

/** How many active memberships of the organization hold the role `slug` (directly or as the default role). */
export async function countMembersHolding(
  tx: Db,
  environmentId: string,
  organizationId: string,
  slug: string,
): Promise<number> {
  const [row] = await rawRows<{ n: number | string }>(
    tx,
    sql`select count(*) as n from ${organizationMemberships}
      where environment_id = ${environmentId} and organization_id = ${organizationId} and status = 'active'
        and ${roleSlugsOf(sql`${organizationMemberships.id}`, sql`${environmentId}`)} @> jsonb_build_array(${slug}::text)`,
  );
  return Number(row?.n ?? 0);
}

/**
 * The organization's active memberships (`om`, joined to their user `u`) as one select of another
 * store's statement, in id order, limited: the members page's member branch. `columns` and `where`
 * read `om`, `u` and the row's role slugs (`roleSlugsOf`, the environment as a value).
 */
export function activeMembersOf(parts: {
  env: SQL;
  org: SQL;
  columns: (slugs: SQL) => SQL;
  where: (slugs: SQL) => SQL;
  dir: SQL;
  limit: SQL;
}): SQL {
  const slugs = roleSlugsOf(sql`om.id`, parts.env);
  return sql`select ${parts.columns(slugs)}
    from ${organizationMemberships} om ${joinUserAs('u', sql`om.user_id`)}
    where om.environment_id = ${parts.env} and om.organization_id = ${parts.org} and om.status = 'active'
      and ${parts.where(slugs)}
    order by om.id ${parts.dir} limit ${parts.limit}`;
}

/** Whether a member (any status) of the organization has this e-mail (case-insensitively): a condition of another store's statement. */
export function memberWithEmail(environmentId: SQL, organizationId: SQL, email: SQL): SQL {
  return sql`exists (select 1 from ${organizationMemberships} om2 ${joinUserAs('u2', sql`om2.user_id`)}
    where u2.environment_id = ${environmentId} and lower(u2.email) = lower(${email})
      and om2.organization_id = ${organizationId})`;
}
