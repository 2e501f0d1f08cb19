// The SCIM codec's queries over the directory tables (which belong to routers/src/directories): its filters as SQL, and offset pages (SCIM's `startIndex`) that
// stay cheap deep in a directory: the page's ids are found first on the (environment_id,
// directory_id, id) index, then only those rows are read.
import { type Db, directoryGroupMembers, directoryGroups, directoryUsers } from '@atrium/db';
import { and, asc, count, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { DirectoryGroupRow, DirectoryUserRow } from '../store.ts';
import type { CompareOp, Condition, ElementTest } from './conditions.ts';

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `left op right` for text, `ci` comparing both sides lower-cased. */
function compareText(left: SQL, op: CompareOp, value: string, ci: boolean): SQL {
  const l = ci ? sql`lower(${left})` : left;
  const r = ci ? value.toLowerCase() : value;
  switch (op) {
    case 'eq':
      return sql`${l} = ${r}`;
    case 'ne':
      return sql`(${left} is null or ${l} <> ${r})`;
    case 'co':
      return sql`${l} like ${`%${escapeLike(r)}%`}`;
    case 'sw':
      return sql`${l} like ${`${escapeLike(r)}%`}`;
    case 'ew':
      return sql`${l} like ${`%${escapeLike(r)}`}`;
    case 'gt':
      return sql`${l} > ${r}`;
    case 'ge':
      return sql`${l} >= ${r}`;
    case 'lt':
      return sql`${l} < ${r}`;
    case 'le':
      return sql`${l} <= ${r}`;
    case 'pr':
      return sql`(${left} is not null and ${left} <> '')`;
  }
}

function compareTime(column: AnyPgColumn, op: CompareOp, value: Date | undefined): SQL {
  if (op === 'pr' || value === undefined) return sql`${column} is not null`;
  const at = value.toISOString();
  switch (op) {
    case 'eq':
      return sql`${column} = ${at}::timestamptz`;
    case 'ne':
      return sql`${column} <> ${at}::timestamptz`;
    case 'gt':
      return sql`${column} > ${at}::timestamptz`;
    case 'ge':
      return sql`${column} >= ${at}::timestamptz`;
    case 'lt':
      return sql`${column} < ${at}::timestamptz`;
    default:
      return sql`${column} <= ${at}::timestamptz`;
  }
}

function elementTest(test: ElementTest): SQL {
  if (test.sub === 'primary') {
    const primary = sql`coalesce((e.value ->> 'primary') = 'true', false)`;
    return test.op === 'ne' ? sql`not ${primary}` : test.value === true ? primary : sql`not ${primary}`;
  }
  return compareText(sql`(e.value ->> ${test.sub})`, test.op, String(test.value), true);
}

/** The SQL of a compiled filter over directory users. */
function userCondition(c: Condition): SQL {
  const u = directoryUsers;
  switch (c.kind) {
    case 'and':
    case 'or':
      return sql`(${sql.join(c.items.map(userCondition), c.kind === 'and' ? sql` and ` : sql` or `)})`;
    case 'not':
      return sql`not coalesce(${userCondition(c.item)}, false)`;
    case 'text': {
      const column =
        c.field === 'userName'
          ? u.userName
          : c.field === 'externalId'
            ? u.externalId
            : c.field === 'givenName'
              ? u.firstName
              : c.field === 'familyName'
                ? u.lastName
                : u.id;
      return compareText(sql`${column}`, c.op, c.value, c.ci);
    }
    case 'time':
      return compareTime(c.field === 'created' ? u.createdAt : u.updatedAt, c.op, c.value);
    case 'active': {
      if (c.op === 'pr') return sql`true`;
      const active = c.op === 'eq' ? c.value : !c.value;
      return active ? sql`${u.state} = 'active'` : sql`${u.state} <> 'active'`;
    }
    case 'element': {
      const tests = sql.join(c.where.map(elementTest), sql` and `);
      return sql`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(${u.attributes} -> 'emails') = 'array' then ${u.attributes} -> 'emails' else '[]'::jsonb end) e where ${tests})`;
    }
    case 'attribute': {
      const [first, second] = c.path;
      const value =
        second === undefined ? sql`(${u.attributes} ->> ${first})` : sql`(${u.attributes} -> ${first} ->> ${second})`;
      return compareText(value, c.op, c.value, true);
    }
    case 'member':
      return sql`false`;
  }
}

/** The SQL of a compiled filter over directory groups. */
function groupCondition(c: Condition): SQL {
  const g = directoryGroups;
  switch (c.kind) {
    case 'and':
    case 'or':
      return sql`(${sql.join(c.items.map(groupCondition), c.kind === 'and' ? sql` and ` : sql` or `)})`;
    case 'not':
      return sql`not coalesce(${groupCondition(c.item)}, false)`;
    case 'text': {
      const column = c.field === 'displayName' ? g.displayName : c.field === 'externalId' ? g.externalId : g.id;
      return compareText(sql`${column}`, c.op, c.value, c.ci);
    }
    case 'time':
      return compareTime(c.field === 'created' ? g.createdAt : g.updatedAt, c.op, c.value);
    case 'member':
      return sql`exists (select 1 from ${directoryGroupMembers} where ${directoryGroupMembers.groupId} = ${g.id} and ${directoryGroupMembers.directoryUserId} = ${c.value})`;
    default:
      return sql`false`;
  }
}

export interface OffsetPage<T> {
  total: number;
  rows: T[];
}

/**
 * One SCIM page of a directory's users (`startIndex` is 1-based; `offset` = startIndex - 1), in id
 * (creation) order, with the count of all that match. The page's ids come from the index on
 * (environment_id, directory_id, id) first, so a deep offset skips index entries, not rows.
 */
export async function pageOfScimUsers(
  db: Db,
  environmentId: string,
  directoryId: string,
  filter: Condition | undefined,
  offset: number,
  limit: number,
  sort?: ScimSort,
): Promise<OffsetPage<DirectoryUserRow>> {
  const u = directoryUsers;
  const where = and(
    eq(u.environmentId, environmentId),
    eq(u.directoryId, directoryId),
    filter && userCondition(filter),
  );
  return offsetPage(db, u, where, offset, limit, sort && userSortKey(sort)) as Promise<OffsetPage<DirectoryUserRow>>;
}

/** One SCIM page of a directory's groups, as `pageOfScimUsers`. */
export async function pageOfScimGroups(
  db: Db,
  environmentId: string,
  directoryId: string,
  filter: Condition | undefined,
  offset: number,
  limit: number,
  sort?: ScimSort,
): Promise<OffsetPage<DirectoryGroupRow>> {
  const g = directoryGroups;
  const where = and(
    eq(g.environmentId, environmentId),
    eq(g.directoryId, directoryId),
    filter && groupCondition(filter),
  );
  return offsetPage(db, g, where, offset, limit, sort && groupSortKey(sort)) as Promise<OffsetPage<DirectoryGroupRow>>;
}

/**
 * The one offset page of both resources: the count of all that match, then the page's ids from the
 * index on (environment_id, directory_id, id), so a deep offset skips index entries, not rows.
 */
async function offsetPage(
  db: Db,
  table: typeof directoryUsers | typeof directoryGroups,
  where: SQL | undefined,
  offset: number,
  limit: number,
  sort?: { key: SQL; descending: boolean } | undefined,
): Promise<OffsetPage<DirectoryUserRow | DirectoryGroupRow>> {
  const t = table as typeof directoryUsers;
  const [counted] = await db.select({ total: count() }).from(t).where(where);
  const total = counted?.total ?? 0;
  if (limit === 0 || offset >= total) return { total, rows: [] };
  // Sorted: by the key (PostgreSQL's default: nulls last ascending, first descending), ties by id.
  const order = sort ? (sort.descending ? [desc(sort.key), desc(t.id)] : [asc(sort.key), asc(t.id)]) : [asc(t.id)];
  const ids = db
    .select({ id: t.id })
    .from(t)
    .where(where)
    .orderBy(...order)
    .offset(offset)
    .limit(limit);
  const rows = await db
    .select()
    .from(t)
    .where(inArray(t.id, ids))
    .orderBy(...order);
  return { total, rows };
}

/** A list's `sortBy` and `sortOrder` (RFC 7644 section 3.4.2.3), of the attributes sorting supports. */
export interface ScimSort {
  by: 'userName' | 'displayName' | 'meta.created';
  descending: boolean;
}

/** The attributes sorting supports, as their names are compared (any case). */
export const SORTABLE: Record<'User' | 'Group', Record<string, ScimSort['by']>> = {
  User: { username: 'userName', displayname: 'displayName', 'meta.created': 'meta.created' },
  Group: { displayname: 'displayName', 'meta.created': 'meta.created' },
};

/** Case-insensitive strings (their caseExact is false) compare lower-cased. */
function userSortKey(sort: ScimSort): { key: SQL; descending: boolean } {
  const u = directoryUsers;
  const key =
    sort.by === 'userName'
      ? sql`lower(${u.userName})`
      : sort.by === 'displayName'
        ? sql`lower(${u.attributes} ->> 'displayName')`
        : sql`${u.createdAt}`;
  return { key, descending: sort.descending };
}

function groupSortKey(sort: ScimSort): { key: SQL; descending: boolean } {
  const g = directoryGroups;
  const key = sort.by === 'meta.created' ? sql`${g.createdAt}` : sql`lower(${g.displayName})`;
  return { key, descending: sort.descending };
}

/** The members of these groups (id and userName), by group, in id order. */
export async function membersOfGroups(
  db: Db,
  groupIds: string[],
): Promise<Map<string, Array<{ id: string; userName: string }>>> {
  const byGroup = new Map<string, Array<{ id: string; userName: string }>>();
  if (groupIds.length === 0) return byGroup;
  for (const id of groupIds) byGroup.set(id, []);
  const rows = await db
    .select({ groupId: directoryGroupMembers.groupId, id: directoryUsers.id, userName: directoryUsers.userName })
    .from(directoryGroupMembers)
    .innerJoin(directoryUsers, eq(directoryUsers.id, directoryGroupMembers.directoryUserId))
    .where(inArray(directoryGroupMembers.groupId, groupIds))
    .orderBy(asc(directoryGroupMembers.groupId), asc(directoryUsers.id));
  for (const row of rows) byGroup.get(row.groupId)?.push({ id: row.id, userName: row.userName });
  return byGroup;
}

/** The groups of these users (id and displayName), by user, in group id order (a User's read-only `groups`). */
export async function groupsOfUsers(
  db: Db,
  userIds: string[],
): Promise<Map<string, Array<{ id: string; displayName: string }>>> {
  const byUser = new Map<string, Array<{ id: string; displayName: string }>>();
  if (userIds.length === 0) return byUser;
  const rows = await db
    .select({
      userId: directoryGroupMembers.directoryUserId,
      id: directoryGroups.id,
      displayName: directoryGroups.displayName,
    })
    .from(directoryGroupMembers)
    .innerJoin(directoryGroups, eq(directoryGroups.id, directoryGroupMembers.groupId))
    .where(inArray(directoryGroupMembers.directoryUserId, userIds))
    .orderBy(asc(directoryGroupMembers.directoryUserId), asc(directoryGroups.id));
  for (const row of rows) {
    const list = byUser.get(row.userId) ?? [];
    list.push({ id: row.id, displayName: row.displayName });
    byUser.set(row.userId, list);
  }
  return byUser;
}
