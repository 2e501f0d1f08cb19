import {
  type Db,
  type InvitationState,
  type KeysetOp,
  keysetCondition,
  type PageParams,
  type PageQuery,
  paginate,
  renderedOnce,
} from '@atrium/db';
import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { isoOfJson } from '../../common/schemas.ts';
import { containsPattern } from '../../common/store.ts';
import { latestInvitationsOf } from '../../invitations/store.ts';
import { activeMembersOf, memberWithEmail } from '../../organization-memberships/store.ts';
import { defaultRoleSlugs, organizationRolesJson } from '../../roles/store.ts';

/** One row of the users table of an organization: an active membership, or the latest invitation of an e-mail. */
export interface MemberListRow {
  kind: 'member' | 'invitation';
  /** The user id of a member; the invitation id of an invitation (WIDGETS-API.md `Member.id`). */
  id: string;
  email: string;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
  profilePictureUrl: string | null;
  /** The wire's ISO form (`…T…Z`), read without a Date (`isoOfText`). */
  createdAt: string;
  lastActivityAt: string | null;
  /** `active` for a member; the invitation's stored state (pending may be past its expiry). */
  state: 'active' | InvitationState;
  expiresAt: Date | null;
  directoryManaged: boolean;
  roleSlugs: string[];
  /** The list's cursor: members first (`0...`), then invitations (`1...`), each in creation order. */
  sortKey: string;
}

/** A role that applies in the organization, as a page names its members' roles. */
export interface PageRole {
  slug: string;
  name: string;
  description: string | null;
  /** The organization's own role (it takes the place of the environment's role of its slug). */
  own: boolean;
}

export interface MemberFilter {
  roleSlug?: string | undefined;
  /** Lower-cased text matched against e-mail and full name. */
  search?: string | undefined;
  /** Only the member row of this user. */
  userId?: string | undefined;
}

/** The sort key column of the list's derived table (paginate compares and orders by it). */
const SORT_KEY = sql`m.sort_key` as unknown as AnyPgColumn;

type Cursor = PageQuery['shape']['cursor'];
type Prefix = '0' | '1';

const jsonArray = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : value) as string[];
const dateOrNull = (value: unknown): Date | null => (value === null ? null : new Date(value as string));

/**
 * A timestamptz as the connection hands it over (PostgreSQL's text form in UTC,
 * `2026-11-22 18:49:52.12+00`) in the wire's form, without a Date (as `isoOfJson`: a page's
 * Dates were parsed and formatted again for every row); anything else goes through a Date.
 */
export function isoOfText(value: unknown): string {
  if (typeof value === 'string' && value.endsWith('+00') && value.charCodeAt(10) === 0x20 /* space */) {
    return isoOfJson(`${value.slice(0, 10)}T${value.slice(11)}:00`);
  }
  return new Date(value as string).toISOString();
}

/** The values of a branch's statement (placeholders in its text, rendered once per shape). */
const VALUES = ['env', 'org', 'cursor', 'limit', 'role', 'pattern', 'user'] as const;
type Values = Record<(typeof VALUES)[number], unknown>;

/** What decides a branch statement's text: everything but the values. */
interface Shape {
  prefix: Prefix;
  ascending: boolean;
  /** The keyset on the raw id, or `all` when the cursor lies wholly before the branch. */
  op: KeysetOp | 'all';
  role: boolean;
  search: boolean;
  user: boolean;
}

/**
 * A branch's keyset on its raw id (index-friendly): the cursor `<prefix><id>` compares on the id
 * within the branch of its prefix, and is wholly before or after every row of another branch
 * (null: no row of the branch lies past it).
 */
function branchOp(prefix: Prefix, cursor: Cursor): Shape['op'] | null {
  if (!cursor) return 'all';
  const upward = cursor.op === 'gt' || cursor.op === 'gte';
  const head = cursor.value.slice(0, 1);
  if (head !== prefix) return head < prefix === upward ? 'all' : null;
  return cursor.op;
}

/**
 * The search and user filters on a branch's cheap columns (`email`, `first_name`, `last_name`,
 * `id` of the relation `at`); the role filter is the branch's own.
 */
function filterOf(shape: Shape, v: Values, at: SQL): SQL {
  const search = shape.search
    ? sql`(lower(${at}.email) like ${v.pattern}
        or lower(coalesce(${at}.first_name, '') || ' ' || coalesce(${at}.last_name, '')) like ${v.pattern})`
    : sql`true`;
  const user = shape.user ? (shape.prefix === '0' ? sql`${at}.id = ${v.user}` : sql`false`) : sql`true`;
  return sql`${search} and ${user}`;
}

/** The role filter on a row's role slugs (an unknown slug matches nothing). */
const roleFilter = (slugs: SQL, shape: Shape, v: Values) =>
  shape.role ? sql`${slugs} @> jsonb_build_array(${v.role}::text)` : sql`true`;

/** The keyset of a branch on its raw id column. */
const keysetOf = (id: SQL, shape: Shape, v: Values) =>
  shape.op === 'all' ? sql`true` : (keysetCondition(id as unknown as AnyPgColumn, shape.op, v.cursor as SQL) as SQL);

/** The invitation's role slugs: its own role, else the environment's default role. */
function invitationSlugs(v: Values, roleSlug: SQL): SQL {
  return sql`case when ${roleSlug} is not null then jsonb_build_array(${roleSlug}) else coalesce(
    ${defaultRoleSlugs(v.env as SQL)}, '[]'::jsonb) end`;
}

/**
 * The page's active memberships, in id order, limited: the page's columns on one query level (the
 * users' cheap columns, each row's role slugs computed as the limited scan yields it, and the roles
 * that name them), as the floor reads them (bench/README.md, "The members page's statement on one level").
 */
function memberBranch(shape: Shape, v: Values, dir: SQL): SQL {
  return activeMembersOf({
    env: v.env as SQL,
    org: v.org as SQL,
    columns: (slugs) => sql`'0' || om.id as sort_key, 'member' as kind, u.id, u.email, u.email_verified, u.first_name,
      u.last_name, u.profile_picture_url, om.created_at, u.last_sign_in_at as last_activity_at, 'active' as state,
      null::timestamptz as expires_at, om.directory_managed, ${slugs} as role_slugs, ${pageRoles(v)} as page_roles`,
    where: (slugs) =>
      sql`${keysetOf(sql`om.id`, shape, v)} and ${roleFilter(slugs, shape, v)} and ${filterOf(shape, v, sql`u`)}`,
    dir,
    limit: v.limit as SQL,
  });
}

/**
 * The page's invitations: the latest of each e-mail (no later one in the organization), not
 * accepted, whose e-mail is not a member's, in id order, limited.
 */
function invitationBranch(shape: Shape, v: Values, dir: SQL): SQL {
  const latest = latestInvitationsOf({
    env: v.env as SQL,
    org: v.org as SQL,
    columns: sql`1 as branch, i.id as ref, 'invitation' as kind, i.id, i.email, false as email_verified,
        null::text as first_name, null::text as last_name, null::text as profile_picture_url, i.created_at,
        null::timestamptz as last_activity_at, i.state::text as state, i.expires_at, false as directory_managed,
        i.role_slug`,
    where: sql`${keysetOf(sql`i.id`, shape, v)} and ${roleFilter(invitationSlugs(v, sql`i.role_slug`), shape, v)}
        and not ${memberWithEmail(v.env as SQL, v.org as SQL, sql`i.email`)}`,
  });
  return sql`select m.* from (${latest}) m where ${filterOf(shape, v, sql`m`)} order by m.ref ${dir} limit ${v.limit}`;
}

/** The roles that apply in the organization (its own and the environment's), for the page to name its rows' roles. */
const pageRoles = (v: Values): SQL => organizationRolesJson(v.env as SQL, v.org as SQL);

/**
 * One branch's rows of the page (at most `limit`), each with the organization's roles (one
 * statement for the rows and the names of their roles). A member's role slugs are computed in its
 * branch, an invitation's here.
 */
function branchQuery(shape: Shape, v: Values): SQL {
  const dir = shape.ascending ? sql`asc` : sql`desc`;
  if (shape.prefix === '0') return memberBranch(shape, v, dir);
  return sql`select m.branch || m.ref as sort_key, m.kind, m.id, m.email, m.email_verified, m.first_name,
      m.last_name, m.profile_picture_url, m.created_at, m.last_activity_at, m.state, m.expires_at,
      m.directory_managed, ${invitationSlugs(v, sql`m.role_slug`)} as role_slugs, ${pageRoles(v)} as page_roles
    from (${invitationBranch(shape, v, dir)}) m order by m.ref ${dir}`;
}

/** The branch statements rendered so far, by shape (at most 2 × 2 × 5 × 8). */
const statements = new Map<string, ReturnType<typeof renderedOnce<(typeof VALUES)[number]>>>();

function statementOf(shape: Shape) {
  const key = `${shape.prefix}${shape.ascending}${shape.op}${shape.role}${shape.search}${shape.user}`;
  let run = statements.get(key);
  if (!run) {
    run = renderedOnce(VALUES, (v) => branchQuery(shape, v));
    statements.set(key, run);
  }
  return run;
}

/**
 * One page of the list: the branches in the read's order (members before invitations), each on
 * its own index; the second only runs when the first leaves the page short.
 */
async function pageRows(db: Db, ids: ListIds, filter: MemberFilter, q: PageQuery): Promise<RawMemberRow[]> {
  const rows: RawMemberRow[] = [];
  const { ascending, cursor } = q.shape;
  const flags = { role: !!filter.roleSlug, search: !!filter.search, user: !!filter.userId };
  for (const prefix of ascending ? (['0', '1'] as const) : (['1', '0'] as const)) {
    const op = rows.length < q.limit ? branchOp(prefix, cursor) : null;
    if (op === null) continue;
    const values: Values = {
      env: ids.environmentId,
      org: ids.organizationId,
      cursor: cursor?.value.slice(1) ?? null,
      limit: q.limit - rows.length,
      role: filter.roleSlug ?? null,
      pattern: filter.search ? containsPattern(filter.search) : null,
      user: filter.userId ?? null,
    };
    rows.push(...(await statementOf({ prefix, ascending, op, ...flags })<RawMemberRow>(db, values)));
  }
  return rows;
}

interface ListIds {
  environmentId: string;
  organizationId: string;
}

interface RawMemberRow {
  sort_key: string;
  kind: 'member' | 'invitation';
  id: string;
  email: string;
  email_verified: boolean;
  first_name: string | null;
  last_name: string | null;
  profile_picture_url: string | null;
  created_at: unknown;
  last_activity_at: unknown;
  state: MemberListRow['state'];
  expires_at: unknown;
  directory_managed: boolean;
  role_slugs: unknown;
  page_roles: unknown;
}

function toMemberListRow(raw: RawMemberRow): MemberListRow {
  return {
    kind: raw.kind,
    id: raw.id,
    email: raw.email,
    emailVerified: raw.email_verified,
    firstName: raw.first_name,
    lastName: raw.last_name,
    profilePictureUrl: raw.profile_picture_url,
    createdAt: isoOfText(raw.created_at),
    lastActivityAt: raw.last_activity_at === null ? null : isoOfText(raw.last_activity_at),
    state: raw.state,
    expiresAt: dateOrNull(raw.expires_at),
    directoryManaged: raw.directory_managed,
    roleSlugs: jsonArray(raw.role_slugs),
    sortKey: raw.sort_key,
  };
}

/**
 * One page of the organization's users table (members, then invitations), keyset on the sort key,
 * with the roles that apply in the organization as its statements read them: undefined when no
 * row came back (then nothing says the organization is there).
 */
export async function pageOfMembers(
  db: Db,
  environmentId: string,
  organizationId: string,
  params: PageParams,
  filter: MemberFilter,
) {
  const ids = { environmentId, organizationId };
  let roles: PageRole[] | undefined;
  const page = await paginate(
    params,
    SORT_KEY,
    async (q) => {
      const raw = await pageRows(db, ids, filter, q);
      if (raw[0] && roles === undefined) roles = jsonRoles(raw[0].page_roles);
      return raw.map(toMemberListRow);
    },
    (row) => row.sortKey,
  );
  return { ...page, roles };
}

const jsonRoles = (value: unknown): PageRole[] =>
  (typeof value === 'string' ? JSON.parse(value) : (value ?? [])) as PageRole[];
