import type { Db } from '@atrium/db';
import { iso } from '../../common/schemas.ts';
import { SendInvitationInput } from '../../invitations/schemas.ts';
import {
  type MailedInvitation,
  mailCounted,
  resendInvitation,
  resendsOf,
  revokeInvitation,
  sendInvitation,
} from '../../invitations/service.ts';
import { findInvitation, type InvitationRow } from '../../invitations/store.ts';
import { ApiError, badRequest, conflict, notFound, toApiError } from '../../kernel/errors.ts';
import { envelope, type Listed, type ListParamsInput, pageParams } from '../../kernel/paging.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import {
  deleteOrganizationMembership,
  type MembershipGuard,
  updateOrganizationMembership,
} from '../../organization-memberships/service.ts';
import { countMembersHolding, type MembershipRow, membershipOf } from '../../organization-memberships/store.ts';
import { requireOrganization } from '../../organizations/lookup.ts';
import type { Permission } from '../../permissions/schemas.ts';
import { getPermission, listPermissions } from '../../permissions/service.ts';
import { quotaKey } from '../../quotas.ts';
import { rolesOfOrganization } from '../../roles/service.ts';
import type { RoleRow } from '../../roles/store.ts';
import { type MemberListRow, pageOfMembers } from './store.ts';

/** Every operation of the users table needs this permission (WIDGETS-API.md section 3). */
export const MEMBERS_PERMISSION = 'widgets:users-table:manage';

/**
 * The organization's administrators are its active members holding the environment's `admin`
 * role (seeded in every environment): the last one cannot be removed or lose that role.
 */
export const ADMIN_ROLE_SLUG = 'admin';

export const MEMBER_STATUSES = ['Active', 'Invited', 'InviteExpired', 'InviteRevoked', 'NoInvite'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
export const MEMBER_ACTIONS = ['edit-role', 'resend-invite', 'revoke-invite', 'revoke-membership'] as const;
export type MemberAction = (typeof MEMBER_ACTIONS)[number];

/** A role as the users table shows it (its organization's own, else the environment's). */
export interface ClientRole {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One row of the users table: a member (id = user id) or an invitation (id = invitation id). */
export interface Member {
  id: string;
  email: string;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
  profilePictureUrl: string | null;
  createdAt: string;
  lastActivityAt: string | null;
  status: MemberStatus;
  actions: MemberAction[];
  isLoggedInUser: true | null;
  roles: { name: string; slug: string; description: string | null }[];
}

export interface ListMembersInput {
  limit: number;
  order: ListParamsInput['order'];
  after?: string | undefined;
  before?: string | undefined;
  roleSlug?: string | undefined;
  search?: string | undefined;
  /** Only this user's member row. */
  userId?: string | undefined;
}

function toClientRole(row: RoleRow): ClientRole {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    isDefault: row.isDefault,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The roles that apply in the token's organization, in priority order. */
export async function organizationRoles(scope: ClientScope): Promise<ClientRole[]> {
  requirePermission(scope, MEMBERS_PERMISSION);
  return (await rolesOfOrganization(scope, scope.client.organizationId)).map(toClientRole);
}

/** One of those roles by id, or null (another organization's role is null too). */
export async function organizationRole(scope: ClientScope, id: string): Promise<ClientRole | null> {
  return (await organizationRoles(scope)).find((role) => role.id === id) ?? null;
}

function statusOf(row: MemberListRow, now: Date): MemberStatus {
  if (row.kind === 'member') return 'Active';
  if (row.state === 'revoked') return 'InviteRevoked';
  if (row.state === 'expired' || (row.expiresAt && row.expiresAt.getTime() <= now.getTime())) return 'InviteExpired';
  return row.state === 'pending' ? 'Invited' : 'NoInvite';
}

/** What the row's menu offers: nothing on your own row or a directory-managed one (the server refuses those too). */
function actionsOf(row: MemberListRow, status: MemberStatus, self: boolean): MemberAction[] {
  if (self) return [];
  if (status === 'Active') return row.directoryManaged ? [] : ['edit-role', 'revoke-membership'];
  if (status === 'Invited') return ['resend-invite', 'revoke-invite'];
  return ['resend-invite'];
}

/** What a page shows of a role: its name and description by its slug. */
type RoleName = Pick<ClientRole, 'name' | 'slug' | 'description'>;

function toMember(scope: ClientScope, row: MemberListRow, rolesBySlug: Map<string, RoleName>, now: Date): Member {
  const status = statusOf(row, now);
  const self = row.kind === 'member' && row.id === scope.client.userId;
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.emailVerified,
    firstName: row.firstName,
    lastName: row.lastName,
    profilePictureUrl: row.profilePictureUrl,
    createdAt: row.createdAt,
    lastActivityAt: row.lastActivityAt,
    status,
    actions: actionsOf(row, status, self),
    isLoggedInUser: self ? true : null,
    roles: row.roleSlugs.map((slug) => {
      const role = rolesBySlug.get(slug);
      return { name: role?.name ?? slug, slug, description: role?.description ?? null };
    }),
  };
}

/**
 * The users table of the token's organization: its active members, then the latest invitation
 * of each e-mail that is not a member (pending, expired or revoked). `before`/`after` are the
 * usual cursors (the REST surface swaps them for the widget's buttons). An unknown role slug
 * matches nothing; empty search is none.
 */
export async function listMembers(scope: ClientScope, input: ListMembersInput): Promise<Listed<Member>> {
  requirePermission(scope, MEMBERS_PERMISSION);
  const search = input.search?.trim().toLowerCase();
  const params = pageParams({ limit: input.limit, order: input.order, after: input.after, before: input.before });
  // One statement reads the rows and the roles that name them; an empty page reads the roles
  // apart (which answers 404 for an organization that is gone).
  const page = await pageOfMembers(scope.db, scope.env.id, scope.client.organizationId, params, {
    roleSlug: input.roleSlug || undefined,
    search: search || undefined,
    userId: input.userId,
  });
  const roles = page.roles ?? (await organizationRoles(scope)).map((role) => ({ ...role, own: true }));
  // The organization's own role takes the place of the environment's of its slug.
  const bySlug = new Map<string, RoleName>();
  for (const role of roles) if (role.own || !bySlug.has(role.slug)) bySlug.set(role.slug, role);
  const now = scope.now();
  return envelope(page, (row) => toMember(scope, row, bySlug, now));
}

/** GraphQL's `OrganizationMember` (and `client.members.*`'s): the users-table row without the widget's menu fields. */
export function toOrganizationMember(m: Member) {
  const { actions: _actions, isLoggedInUser: _self, roles, ...fields } = m;
  return { ...fields, roles: roles.map((r) => ({ name: r.name, slug: r.slug })) };
}

/** Whether a membership may hold several roles (Atrium's memberships do: `role_slugs`). */
export const MULTIPLE_ROLES_ENABLED = true;

/** The member row of a user of the token's organization, or null. */
async function memberOfUser(scope: ClientScope, userId: string): Promise<Member | null> {
  const page = await listMembers(scope, { limit: 1, order: 'asc', userId });
  return page.data[0] ?? null;
}

// Mutations. Each refusal is an ApiError with the status and message the widgets act on, and in
// `detail` the payload of the variant the client schema declares for it (client-api/variants.ts).

/** A refusal carrying its variant's payload. */
const refusal = (error: ApiError, detail: Record<string, unknown>) =>
  new ApiError(error.status, error.apiCode, error.message, error.errors, error.retryAfterSeconds, detail);

/** The refusals of an invitation, with the messages the UsersManagement invite dialog matches (WIDGETS-API.md section 2.4). */
const INVITE = {
  alreadyMember: (email: string) => refusal(badRequest('user_already_exists', 'User already exists'), { email }),
  alreadyInvited: (email: string) => refusal(badRequest('user_already_invited', 'User already invited'), { email }),
  invalidEmail: (email: string) => refusal(badRequest('invalid_email', 'Invalid email'), { email }),
  invalidRole: (roleSlug: string | null) => refusal(badRequest('invalid_role', 'Invalid role'), { roleSlug }),
  invalidExpiry: () => badRequest('invalid_expiry', 'Invalid invitation expiry'),
  /** The mail server refused the invitee's address for good (the widget shows its generic error). */
  notDeliverable: (email: string) =>
    refusal(badRequest('invitee_email_not_deliverable', "The invitee's e-mail address cannot be delivered to."), {
      email,
    }),
  blocked: () =>
    badRequest('organization_blocked_from_sending_invites', 'This organization is not allowed to send invites.'),
};
const memberMissing = (userId: string) => refusal(notFound('user', userId), { userId });
const invitationMissing = (id: string) => refusal(notFound('invitation', id), { userId: id });

/** An invitation as the client API shows it (GraphQL `OrganizationInvitation`). */
export interface ClientInvitation {
  id: string;
  email: string;
  status: 'Accepted' | 'Expired' | 'Pending' | 'Revoked';
  roleSlug: string | null;
  expiresAt: string;
  createdAt: string;
}

const INVITATION_STATUS = { accepted: 'Accepted', expired: 'Expired', pending: 'Pending', revoked: 'Revoked' } as const;

function toClientInvitation(invitation: {
  id: string;
  email: string;
  state: keyof typeof INVITATION_STATUS;
  role_slug: string | null;
  expires_at: string;
  created_at: string;
}): ClientInvitation {
  return {
    id: invitation.id,
    email: invitation.email,
    status: INVITATION_STATUS[invitation.state],
    roleSlug: invitation.role_slug,
    expiresAt: invitation.expires_at,
    createdAt: invitation.created_at,
  };
}

/** The roles service's 422 for a slug naming no role (a field error `role_not_found`). */
const isUnknownRole = (error: unknown) => !!toApiError(error)?.errors?.some((e) => e.code === 'role_not_found');

export interface InviteMemberInput {
  email: string;
  roleSlug?: string | undefined;
  expiresInDays?: number | undefined;
}

/** Invites an e-mail into the token's organization through the invitations service (mail, event, quota). */
export async function inviteMember(scope: ClientScope, input: InviteMemberInput) {
  requirePermission(scope, MEMBERS_PERMISSION);
  // The e-mail rule of invitations: the API-key path's own schema.
  const parsed = SendInvitationInput.shape.email.safeParse(input.email);
  if (!parsed.success) throw INVITE.invalidEmail(input.email);
  const email = parsed.data;
  if (input.expiresInDays !== undefined && !(input.expiresInDays >= 1 && input.expiresInDays <= 30)) {
    throw INVITE.invalidExpiry();
  }
  let sent: MailedInvitation;
  try {
    sent = await sendInvitation(scope, {
      email,
      organization_id: scope.client.organizationId,
      role_slug: input.roleSlug,
      expires_in_days: input.expiresInDays,
      inviter_user_id: scope.client.userId ?? undefined,
    });
  } catch (error) {
    const api = toApiError(error);
    const code = api?.apiCode;
    if (code === 'organization_membership_already_exists') throw INVITE.alreadyMember(email);
    if (code === 'invitation_already_exists') throw INVITE.alreadyInvited(email);
    if (isUnknownRole(error)) throw INVITE.invalidRole(input.roleSlug ?? null);
    // The organization holds as many pending invitations as its quota allows: it may send no more.
    if (code === 'quota_exceeded' && api?.errors?.[0]?.field === PENDING_INVITATIONS_QUOTA) {
      throw INVITE.blocked();
    }
    throw error;
  }
  // The widgets reach the invitee by e-mail only: an address the mail server refuses for good
  // gets no invitation (revoked at once, `invitation.revoked`), and the caller is told.
  if (sent.mail === 'refused') {
    await revokeInvitation(scope, sent.invitation.id);
    throw INVITE.notDeliverable(email);
  }
  return toClientInvitation(sent.invitation);
}

/** The quota an organization's pending invitations count against (routers/src/quotas.ts). */
const PENDING_INVITATIONS_QUOTA = quotaKey('pendingInvitationsPerOrganization');

/** The token organization's invitation with this id, or undefined (another organization's is absent). */
async function invitationOf(scope: ClientScope, id: string): Promise<InvitationRow | undefined> {
  try {
    const row = await findInvitation(scope.db, scope.env.id, id);
    return row.organizationId === scope.client.organizationId ? row : undefined;
  } catch (error) {
    if (toApiError(error)?.status === 404) return undefined;
    throw error;
  }
}

/**
 * Resends an invitation: a pending one is mailed again (same token and expiry); an expired or
 * revoked one is replaced by a new invitation of the same e-mail and role (a new id).
 */
export async function resendMemberInvitation(scope: ClientScope, id: string) {
  requirePermission(scope, MEMBERS_PERMISSION);
  const row = await invitationOf(scope, id);
  if (!row) throw invitationMissing(id);
  if (row.state === 'accepted') throw alreadyAccepted(row.acceptedUserId ?? id);
  const pending = row.state === 'pending' && row.expiresAt.getTime() > scope.now().getTime();
  if (pending) {
    const resent = await resendInvitation(scope, { id: row.id });
    // A refusal of the address leaves the invitation pending (it stood before); the caller is told.
    if (resent.mail === 'refused') throw INVITE.notDeliverable(row.email);
    return toClientInvitation(resent.invitation);
  }
  // A new invitation to the same invitee is a resend of theirs too: revoke-and-resend stays bounded.
  // An invitation's refusal leaves the mail counted (as a sent one does): it is carried out of
  // `mailCounted`, which gives the count back only for a failure.
  const again = await mailCounted(scope, [resendsOf(scope.env.id, row.organizationId, row.email)], () =>
    inviteMember(scope, { email: row.email, roleSlug: row.roleSlug ?? undefined }).catch((error: unknown) => {
      if (error instanceof ApiError && INVITE_REFUSALS.has(error.apiCode)) return error;
      throw error;
    }),
  );
  if (!(again instanceof ApiError)) return again;
  if (again.apiCode === 'user_already_exists') throw alreadyAccepted(id);
  if (again.apiCode === 'invitee_email_not_deliverable') throw again;
  throw conflict('invitation_not_resendable', 'The invitation cannot be sent again.');
}

/** The codes of INVITE's refusals. */
const INVITE_REFUSALS = new Set([
  'user_already_exists',
  'user_already_invited',
  'invalid_email',
  'invalid_role',
  'invalid_expiry',
  'invitee_email_not_deliverable',
  'organization_blocked_from_sending_invites',
]);

const alreadyAccepted = (userId: string) =>
  refusal(new ApiError(422, 'invitation_already_accepted', 'The invitation was accepted already.'), { userId });

export async function revokeMemberInvitation(scope: ClientScope, id: string) {
  requirePermission(scope, MEMBERS_PERMISSION);
  const row = await invitationOf(scope, id);
  if (!row) throw invitationMissing(id);
  const pending = row.state === 'pending' && row.expiresAt.getTime() > scope.now().getTime();
  if (!pending) throw refusal(badRequest('invitation_not_pending', 'The invitation is not pending.'), { userId: id });
  return toClientInvitation(await revokeInvitation(scope, row.id));
}

/**
 * The client surfaces' rules on changing a membership, inside its transaction: a
 * directory-managed membership is the directory's to change; the organization keeps at least
 * one admin (the organization row is held so two concurrent demotions are counted one by one).
 */
function memberGuard(scope: ClientScope): MembershipGuard {
  return async (tx: Db, before: MembershipRow, next: string[] | null) => {
    if (before.directoryManaged) {
      throw conflict(
        'member_managed_by_directory',
        'This member is managed by a directory and cannot be changed here.',
      );
    }
    if (!before.roleSlugs.includes(ADMIN_ROLE_SLUG) || next?.includes(ADMIN_ROLE_SLUG)) return;
    await requireOrganization(tx, scope, before.organizationId, 'no key update');
    if ((await countMembersHolding(tx, scope.env.id, before.organizationId, ADMIN_ROLE_SLUG)) <= 1) {
      throw conflict('last_admin', 'The last admin of an organization cannot be removed or lose the admin role.');
    }
  };
}

/** Removes a member of the token's organization (not yourself, not the last admin, not a directory's). */
export async function removeMember(scope: ClientScope, userId: string) {
  requirePermission(scope, MEMBERS_PERMISSION);
  const membershipId = (await membershipOf(scope.db, scope.env.id, scope.client.organizationId, userId))?.id;
  if (!membershipId) throw memberMissing(userId);
  if (userId === scope.client.userId) {
    throw conflict('cannot_remove_self', 'You cannot remove yourself from the organization.');
  }
  try {
    await deleteOrganizationMembership(scope, membershipId, memberGuard(scope));
  } catch (error) {
    const api = toApiError(error);
    if (api?.apiCode === 'member_managed_by_directory') {
      throw refusal(conflict('member_managed_by_directory', 'This member is managed by a directory.'), { userId });
    }
    if (api?.status === 404) throw memberMissing(userId);
    throw error;
  }
  return { userId };
}

/** Gives a member of the token's organization these roles (slugs; an unknown one is 422 `invalid_role`). */
export async function updateMemberRoles(scope: ClientScope, userId: string, roleSlugs: string[]) {
  requirePermission(scope, MEMBERS_PERMISSION);
  const membershipId = (await membershipOf(scope.db, scope.env.id, scope.client.organizationId, userId))?.id;
  if (!membershipId) throw memberMissing(userId);
  try {
    await updateOrganizationMembership(scope, { id: membershipId, role_slugs: roleSlugs }, memberGuard(scope));
  } catch (error) {
    const api = toApiError(error);
    if (isUnknownRole(error)) throw refusal(new ApiError(422, 'invalid_role', 'Invalid role'), { roleSlugs });
    if (api?.status === 404) throw memberMissing(userId);
    throw error;
  }
  const member = await memberOfUser(scope, userId);
  if (!member) throw memberMissing(userId);
  return member;
}

// Permissions (GraphQL `permissions`, `effectivePermissions`).

/** A permission as the client API shows it (GraphQL `Permission`). */
export interface ClientPermission {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  system: boolean;
  createdAt: string;
  updatedAt: string;
}

function toClientPermission(p: Permission): ClientPermission {
  const { id, name, slug, description, system } = p;
  return { id, name, slug, description, system, createdAt: p.created_at, updatedAt: p.updated_at };
}

/** The environment's permissions, a page at a time (the permissions service's own list). */
export async function listClientPermissions(scope: ClientScope, input: Omit<ListMembersInput, 'roleSlug' | 'userId'>) {
  requirePermission(scope, MEMBERS_PERMISSION);
  const { limit, order, after, before } = input;
  const page = await listPermissions(scope, { limit, order, after, before }, input.search?.trim() || undefined);
  return { data: page.data.map(toClientPermission), list_metadata: page.list_metadata };
}

/** What a member of the token's organization may do: the permissions of their roles (404 for a non-member). */
export async function effectivePermissions(scope: ClientScope, userId: string): Promise<ClientPermission[]> {
  requirePermission(scope, MEMBERS_PERMISSION);
  const member = await memberOfUser(scope, userId);
  if (!member) throw notFound('user', userId);
  const held = new Set(member.roles.map((r) => r.slug));
  const rows = await rolesOfOrganization(scope, scope.client.organizationId);
  const slugs = [...new Set(rows.filter((r) => held.has(r.slug)).flatMap((r) => r.permissions))].sort();
  return Promise.all(slugs.map(async (slug) => toClientPermission(await getPermission(scope, slug))));
}
