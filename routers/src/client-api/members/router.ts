import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { ApiError, badRequest, notFound } from '../../kernel/errors.ts';
import { clientProcedure } from '../../trpc.ts';
import {
  type ClientRole,
  inviteMember,
  listMembers,
  MEMBER_ACTIONS,
  MEMBER_STATUSES,
  type Member,
  organizationRoles,
  removeMember,
  resendMemberInvitation,
  revokeMemberInvitation,
  updateMemberRoles,
} from './service.ts';

/** Whether a membership may hold several roles (Atrium's memberships do: `role_slugs`). */
const MULTIPLE_ROLES_ENABLED = true;

const Text = z.string().max(1000);
const RoleSlugs = z.array(z.string().min(1).max(256)).max(20);

const MemberRole = z.object({
  name: z.string(),
  slug: z.string(),
  default: z.boolean(),
  description: z.string().nullable(),
});
const WidgetMember = z.object({
  id: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  profilePictureUrl: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  createdAt: z.string(),
  lastActivityAt: z.string().nullable(),
  status: z.enum(MEMBER_STATUSES),
  actions: z.array(z.enum(MEMBER_ACTIONS)),
  isLoggedInUser: z.literal(true).nullable(),
  roles: z.array(z.object({ name: z.string(), slug: z.string(), description: z.string().nullable() })),
});
const Done = z.object({ id: z.string(), success: z.boolean() });

const toMemberRole = (r: ClientRole) => ({
  name: r.name,
  slug: r.slug,
  default: r.isDefault,
  description: r.description,
});

/** A mutation's union result on REST: the success variant, else the refusal its variant maps to. */
function outcome<R extends { __typename: string }>(
  result: R,
  success: string,
  refusals: Record<string, () => ApiError>,
): R {
  if (result.__typename === success) return result;
  const refuse = refusals[result.__typename];
  throw refuse ? refuse() : new ApiError(400, 'request_refused', `The request was refused: ${result.__typename}.`);
}

/** The messages the UsersManagement invite dialog matches (WIDGETS-API.md section 2.4). */
const INVITE_REFUSALS = {
  InviteeAlreadyMember: () => badRequest('user_already_exists', 'User already exists'),
  InviteeAlreadyInvited: () => badRequest('user_already_invited', 'User already invited'),
  InvalidInviteeEmail: () => badRequest('invalid_email', 'Invalid email'),
  InvalidInviteeRole: () => badRequest('invalid_role', 'Invalid role'),
  InvalidInvitationExpiry: () => badRequest('invalid_expiry', 'Invalid invitation expiry'),
  InviteeEmailNotDeliverable: () => notDeliverable(),
  OrganizationBlockedFromSendingInvites: () =>
    badRequest('organization_blocked_from_sending_invites', 'This organization is not allowed to send invites.'),
};
/** The mail server refused the invitee's address for good (the widget shows its generic error). */
const notDeliverable = () =>
  badRequest('invitee_email_not_deliverable', "The invitee's e-mail address cannot be delivered to.");
const memberMissing = (id: string) => () => notFound('user', id);
const invitationMissing = (id: string) => () => notFound('invitation', id);

const widget = (method: 'GET' | 'POST' | 'DELETE', path: string, summary: string) => ({
  openapi: { method, path: `/_widgets/UserManagement/${path}` as const, tags: ['Widgets'], summary },
});

/** REST for the official UsersManagement widget (`/_widgets/UserManagement/...`, WIDGETS-API.md section 2, rows 1-8). */
export const membersWidgetProcedures = {
  members: clientProcedure
    .meta(widget('GET', 'members', "The organization's members and invitations"))
    .input(
      z.object({
        limit: z.coerce.number().int().min(1).max(100).default(10),
        after: Id.optional(),
        before: Id.optional(),
        role: Text.optional(),
        search: Text.optional(),
      }),
    )
    .output(
      z.object({
        data: z.array(WidgetMember),
        list_metadata: z.object({ before: z.string().nullable(), after: z.string().nullable() }),
      }),
    )
    .query(async ({ ctx, input }) => {
      // The widget's "Next" sends `before` and "Previous" `after` (section 2.3): the cursors swap here.
      const page = await listMembers(ctx.scope, {
        limit: input.limit,
        order: 'asc',
        after: input.before,
        before: input.after,
        roleSlug: input.role,
        search: input.search,
      });
      return { data: page.data, list_metadata: { before: page.after, after: page.before } };
    }),
  rolesAndConfig: clientProcedure
    .meta(widget('GET', 'roles-and-config', "The organization's roles, and whether members hold several"))
    .input(z.object({}))
    .output(z.object({ roles: z.array(MemberRole), multipleRolesEnabled: z.boolean() }))
    .query(async ({ ctx }) => ({
      roles: (await organizationRoles(ctx.scope)).map(toMemberRole),
      multipleRolesEnabled: MULTIPLE_ROLES_ENABLED,
    })),
  roles: clientProcedure
    .meta(widget('GET', 'roles', "The organization's roles, the default one marked"))
    .input(z.object({}))
    .output(z.array(MemberRole))
    .query(async ({ ctx }) => (await organizationRoles(ctx.scope)).map(toMemberRole)),
  inviteUser: clientProcedure
    .meta(widget('POST', 'invite-user', 'Invite an e-mail into the organization'))
    .input(z.object({ email: Text, firstName: Text.nullish(), lastName: Text.nullish(), roles: RoleSlugs.default([]) }))
    .output(z.object({ success: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      outcome(
        await inviteMember(ctx.scope, { email: input.email, roleSlug: input.roles[0] }),
        'UserInvited',
        INVITE_REFUSALS,
      );
      return { success: true };
    }),
  updateMember: clientProcedure
    .meta(widget('POST', 'members/{userId}', "Replace a member's roles"))
    .input(z.object({ userId: Id, roles: RoleSlugs }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      outcome(await updateMemberRoles(ctx.scope, input.userId, input.roles), 'MemberRoleUpdated', {
        MemberNotFound: memberMissing(input.userId),
        RoleNotFound: () => new ApiError(422, 'invalid_role', 'Invalid role'),
      });
      return { id: input.userId, success: true };
    }),
  removeMember: clientProcedure
    .meta(widget('DELETE', 'members/{userId}', 'Remove a member from the organization'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      outcome(await removeMember(ctx.scope, input.userId), 'MemberRemoved', {
        MemberNotFound: memberMissing(input.userId),
        MemberIsManagedByDirectory: () =>
          new ApiError(409, 'member_managed_by_directory', 'This member is managed by a directory.'),
      });
      return { id: input.userId, success: true };
    }),
  revokeInvite: clientProcedure
    .meta(widget('DELETE', 'invites/{userId}', 'Revoke an invitation (the row id is the invitation id)'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      outcome(await revokeMemberInvitation(ctx.scope, input.userId), 'InvitationRevoked', {
        InvitationNotFound: invitationMissing(input.userId),
        InvitationNotPending: () => badRequest('invitation_not_pending', 'The invitation is not pending.'),
      });
      return { id: input.userId, success: true };
    }),
  resendInvite: clientProcedure
    .meta(widget('POST', 'invites/{userId}/resend', 'Send an invitation again (a new one once expired or revoked)'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      const result = outcome(await resendMemberInvitation(ctx.scope, input.userId), 'InvitationResent', {
        ResendInvitationNotFound: invitationMissing(input.userId),
        InviteeAlreadyAccepted: () =>
          new ApiError(422, 'invitation_already_accepted', 'The invitation was accepted already.'),
        InviteeEmailNotDeliverable: notDeliverable,
      });
      return { id: 'invitation' in result ? result.invitation.id : input.userId, success: true };
    }),
};

/** GraphQL's `OrganizationMember`: the users-table row without the widget's menu fields. */
export function toOrganizationMember(m: Member) {
  const { actions: _actions, isLoggedInUser: _self, roles, ...fields } = m;
  return { ...fields, roles: roles.map((r) => ({ name: r.name, slug: r.slug })) };
}

const PageInput = z.object({
  after: Id.optional(),
  before: Id.optional(),
  limit: z.number().int().min(1).max(100).default(10),
  order: z.enum(['Asc', 'Desc', 'Normal']).default('Normal'),
});
const UserIdInput = z.object({ userId: Id });

/** Typed tRPC (`client.members.*`): the GraphQL operations with the GraphQL shapes (`__typename` on unions). */
export const membersClientProcedures = {
  list: clientProcedure
    .input(PageInput.extend({ roleSlug: Text.optional(), search: Text.optional() }))
    .query(async ({ ctx, input }) => {
      const page = await listMembers(ctx.scope, { ...input, order: input.order === 'Desc' ? 'desc' : 'asc' });
      return { data: page.data.map(toOrganizationMember), listMetadata: { before: page.before, after: page.after } };
    }),
  roles: clientProcedure.query(async ({ ctx }) => ({
    roles: await organizationRoles(ctx.scope),
    multipleRolesEnabled: MULTIPLE_ROLES_ENABLED,
  })),
  invite: clientProcedure
    .input(z.object({ email: Text, roleSlug: Text.optional(), expiresInDays: z.number().int().optional() }))
    .mutation(({ ctx, input }) => inviteMember(ctx.scope, input)),
  resendInvitation: clientProcedure
    .input(UserIdInput)
    .mutation(({ ctx, input }) => resendMemberInvitation(ctx.scope, input.userId)),
  revokeInvitation: clientProcedure
    .input(UserIdInput)
    .mutation(({ ctx, input }) => revokeMemberInvitation(ctx.scope, input.userId)),
  remove: clientProcedure.input(UserIdInput).mutation(({ ctx, input }) => removeMember(ctx.scope, input.userId)),
  updateRole: clientProcedure.input(UserIdInput.extend({ roleSlugs: RoleSlugs })).mutation(async ({ ctx, input }) => {
    const result = await updateMemberRoles(ctx.scope, input.userId, input.roleSlugs);
    return 'member' in result ? { ...result, member: toOrganizationMember(result.member) } : result;
  }),
};
