/**
 * The members-page floor (bench/README.md, "Floors (issue #35)"): `GET
 * /_widgets/UserManagement/members`'s first page (10 rows, oldest membership first) of the
 * token's organization, as the same JSON Atrium answers, with the least work it takes: the
 * token check and the held-permissions read (floors/common.ts), then one statement that reads
 * the page's active members with their users, each member's role slugs (its own roles in order,
 * else the environment's default role), and the roles of the organization that name them.
 */
import { claimsOf, environmentId, heldPermissions, listen, send, sql } from './common.ts';

const PAGE = 10;
const MANAGE = 'widgets:users-table:manage';

interface Row {
  ref: string;
  id: string;
  email: string;
  email_verified: boolean;
  first_name: string | null;
  last_name: string | null;
  profile_picture_url: string | null;
  created_at: Date;
  last_sign_in_at: Date | null;
  directory_managed: boolean;
  role_slugs: string[];
  roles: { slug: string; name: string; description: string | null }[] | null;
}

listen(async (req, res) => {
  if (req.method !== 'GET' || !req.url?.startsWith('/_widgets/UserManagement/members')) {
    return send(res, 404, { message: 'not found' });
  }
  const claims = await claimsOf(req);
  if (!claims) return send(res, 403, { message: 'forbidden' });
  if (!(await heldPermissions(claims))?.has(MANAGE)) return send(res, 403, { message: 'forbidden' });
  const org = String(claims.org_id);
  const rows = await sql<Row[]>`
    with page as (
      select om.id as ref, u.id, u.email, u.email_verified, u.first_name, u.last_name, u.profile_picture_url,
        om.created_at, u.last_sign_in_at, om.directory_managed,
        coalesce(
          (select array_agg(r.slug order by mr.position) from organization_membership_roles mr
            join roles r on r.id = mr.role_id where mr.organization_membership_id = om.id),
          (select array[r.slug] from roles r
            where r.environment_id = ${environmentId} and r.organization_id is null and r.is_default),
          '{}') as role_slugs
      from organization_memberships om join users u on u.id = om.user_id
      where om.environment_id = ${environmentId} and om.organization_id = ${org} and om.status = 'active'
      order by om.id limit ${PAGE + 1}
    )
    select page.*, (select json_agg(json_build_object('slug', r.slug, 'name', r.name, 'description', r.description)
        order by r.organization_id nulls first)
      from roles r where r.environment_id = ${environmentId}
        and (r.organization_id is null or r.organization_id = ${org})) as roles
    from page order by page.ref`;
  const bySlug = new Map((rows[0]?.roles ?? []).map((role) => [role.slug, role]));
  const data = rows.slice(0, PAGE).map((row) => {
    const self = row.id === claims.sub;
    return {
      id: row.id,
      email: row.email,
      emailVerified: row.email_verified,
      profilePictureUrl: row.profile_picture_url,
      firstName: row.first_name,
      lastName: row.last_name,
      createdAt: row.created_at.toISOString(),
      lastActivityAt: row.last_sign_in_at ? row.last_sign_in_at.toISOString() : null,
      status: 'Active',
      actions: self || row.directory_managed ? [] : ['edit-role', 'revoke-membership'],
      isLoggedInUser: self ? true : null,
      roles: row.role_slugs.map((slug) => {
        const role = bySlug.get(slug);
        return { name: role?.name ?? slug, slug, description: role?.description ?? null };
      }),
    };
  });
  // The widget's "Next" is `before` (Atrium swaps the cursors for its buttons).
  const last = rows[PAGE - 1];
  send(res, 200, { data, list_metadata: { before: rows.length > PAGE && last ? `0${last.ref}` : null, after: null } });
});
