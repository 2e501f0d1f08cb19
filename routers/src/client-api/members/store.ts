import {
  type Db,
  type InvitationState,
  invitations,
  type PageParams,
  paginate,
  rawRows,
  roles,
  users,
} from '@atrium/db';
import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { containsPattern } from '../../common/store.ts';
import { membershipColumns } from '../../organization-memberships/store.ts';

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
  createdAt: Date;
  lastActivityAt: Date | null;
  /** `active` for a member; the invitation's stored state (pending may be past its expiry). */
  state: 'active' | InvitationState;
  expiresAt: Date | null;
  directoryManaged: boolean;
  roleSlugs: string[];
  /** The list's cursor: members first (`0...`), then invitations (`1...`), each in creation order. */
  sortKey: string;
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

const jsonArray = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : value) as string[];
const dateOrNull = (value: unknown): Date | null => (value === null ? null : new Date(value as string));

/**
 * The organization's active memberships (with their users) and, for each e-mail that is not a
 * member, its latest invitation unless accepted, as one list keyed by `sort_key`.
 */
function memberRows(environmentId: string, organizationId: string): SQL {
  const slugs = membershipColumns.roleSlugs;
  return sql`
    select '0' || "organization_memberships"."id" as sort_key, 'member' as kind, u.id, u.email,
      u.email_verified, u.first_name, u.last_name, u.profile_picture_url,
      "organization_memberships"."created_at", u.last_sign_in_at as last_activity_at, 'active' as state,
      null::timestamptz as expires_at, "organization_memberships"."directory_managed", ${slugs} as role_slugs
    from organization_memberships join ${users} u on u.id = "organization_memberships"."user_id"
    where "organization_memberships"."environment_id" = ${environmentId}
      and "organization_memberships"."organization_id" = ${organizationId}
      and "organization_memberships"."status" = 'active'
    union all
    select '1' || i.id, 'invitation', i.id, i.email, false, null, null, null, i.created_at, null, i.state,
      i.expires_at, false,
      case when i.role_slug is not null then jsonb_build_array(i.role_slug) else coalesce(
        (select jsonb_build_array(r.slug) from ${roles} r
          where r.environment_id = i.environment_id and r.organization_id is null and r.is_default),
        '[]'::jsonb) end
    from (
      select distinct on (lower(email)) * from ${invitations}
      where environment_id = ${environmentId} and organization_id = ${organizationId}
      order by lower(email), id desc
    ) i
    where i.state <> 'accepted' and not exists (
      select 1 from organization_memberships om2 join ${users} u2 on u2.id = om2.user_id
      where om2.organization_id = ${organizationId} and lower(u2.email) = lower(i.email))`;
}

function filterOf(filter: MemberFilter): SQL {
  const role = filter.roleSlug ? sql`m.role_slugs @> jsonb_build_array(${filter.roleSlug}::text)` : sql`true`;
  const pattern = filter.search ? containsPattern(filter.search) : undefined;
  const search = pattern
    ? sql`(lower(m.email) like ${pattern}
        or lower(coalesce(m.first_name, '') || ' ' || coalesce(m.last_name, '')) like ${pattern})`
    : sql`true`;
  const user = filter.userId ? sql`m.kind = 'member' and m.id = ${filter.userId}` : sql`true`;
  return sql`${role} and ${search} and ${user}`;
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
    createdAt: new Date(raw.created_at as string),
    lastActivityAt: dateOrNull(raw.last_activity_at),
    state: raw.state,
    expiresAt: dateOrNull(raw.expires_at),
    directoryManaged: raw.directory_managed,
    roleSlugs: jsonArray(raw.role_slugs),
    sortKey: raw.sort_key,
  };
}

/** One page of the organization's users table (members, then invitations), keyset on the sort key. */
export function pageOfMembers(
  db: Db,
  environmentId: string,
  organizationId: string,
  params: PageParams,
  filter: MemberFilter,
) {
  const rows = memberRows(environmentId, organizationId);
  return paginate(
    params,
    SORT_KEY,
    async (q) => {
      const raw = await rawRows<RawMemberRow>(
        db,
        sql`select * from (${rows}) m where ${filterOf(filter)} and ${q.keyset ?? sql`true`}
          order by ${q.orderBy} limit ${q.limit}`,
      );
      return raw.map(toMemberListRow);
    },
    (row) => row.sortKey,
  );
}

/** The id of the user's membership of the organization (any status), or undefined. */
export async function membershipIdOfUser(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string,
): Promise<string | undefined> {
  const [row] = await rawRows<{ id: string }>(
    db,
    sql`select id from organization_memberships
      where environment_id = ${environmentId} and organization_id = ${organizationId} and user_id = ${userId}
      limit 1`,
  );
  return row?.id;
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
    sql`select count(*) as n from organization_memberships
      where environment_id = ${environmentId} and organization_id = ${organizationId} and status = 'active'
        and ${membershipColumns.roleSlugs} @> jsonb_build_array(${slug}::text)`,
  );
  return Number(row?.n ?? 0);
}

/** The role of the organization (its own, or the environment's) with this id, if any. */
export async function roleIdInOrganization(db: Db, environmentId: string, organizationId: string, id: string) {
  const [row] = await db
    .select({ slug: roles.slug, organizationId: roles.organizationId })
    .from(roles)
    .where(and(eq(roles.environmentId, environmentId), eq(roles.id, id)))
    .limit(1);
  if (!row || (row.organizationId !== null && row.organizationId !== organizationId)) return undefined;
  return row.slug;
}
