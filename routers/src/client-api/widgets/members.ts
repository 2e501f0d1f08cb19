import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { ListMetadata, WidgetPageInput, widgetList, widgetPageParams } from '../../kernel/paging.ts';
import { clientProcedure } from '../../trpc.ts';
import { RoleSlugs, Text } from '../members/schemas.ts';
import {
  type ClientRole,
  inviteMember,
  listMembers,
  MEMBER_ACTIONS,
  MEMBER_STATUSES,
  MULTIPLE_ROLES_ENABLED,
  organizationRoles,
  removeMember,
  resendMemberInvitation,
  revokeMemberInvitation,
  updateMemberRoles,
} from '../members/service.ts';

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

const widget = (method: 'GET' | 'POST' | 'DELETE', path: string, summary: string) => ({
  openapi: { method, path: `/_widgets/UserManagement/${path}` as const, tags: ['Widgets'], summary },
});

/** The UsersManagement widget (`/_widgets/UserManagement/...`, WIDGETS-API.md section 2, rows 1-8); refusals are the services' ApiErrors. */
export const membersWidgetProcedures = {
  members: clientProcedure
    .meta(widget('GET', 'members', "The organization's members and invitations"))
    .input(WidgetPageInput.extend({ role: Text.optional(), search: Text.optional() }))
    .output(z.object({ data: z.array(WidgetMember), list_metadata: ListMetadata }))
    .query(async ({ ctx, input }) =>
      widgetList(
        await listMembers(ctx.scope, { ...widgetPageParams(input), roleSlug: input.role, search: input.search }),
      ),
    ),
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
      await inviteMember(ctx.scope, { email: input.email, roleSlug: input.roles[0] });
      return { success: true };
    }),
  updateMember: clientProcedure
    .meta(widget('POST', 'members/{userId}', "Replace a member's roles"))
    .input(z.object({ userId: Id, roles: RoleSlugs }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      await updateMemberRoles(ctx.scope, input.userId, input.roles);
      return { id: input.userId, success: true };
    }),
  removeMember: clientProcedure
    .meta(widget('DELETE', 'members/{userId}', 'Remove a member from the organization'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      await removeMember(ctx.scope, input.userId);
      return { id: input.userId, success: true };
    }),
  revokeInvite: clientProcedure
    .meta(widget('DELETE', 'invites/{userId}', 'Revoke an invitation (the row id is the invitation id)'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      await revokeMemberInvitation(ctx.scope, input.userId);
      return { id: input.userId, success: true };
    }),
  resendInvite: clientProcedure
    .meta(widget('POST', 'invites/{userId}/resend', 'Send an invitation again (a new one once expired or revoked)'))
    .input(z.object({ userId: Id }))
    .output(Done)
    .mutation(async ({ ctx, input }) => {
      const invitation = await resendMemberInvitation(ctx.scope, input.userId);
      return { id: invitation.id, success: true };
    }),
};
