import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { GraphQLPageArgs, graphqlList, type Listed, pageOfGraphQLArgs } from '../../kernel/paging.ts';
import { clientProcedure } from '../../trpc.ts';
import { RoleSlugs, Text } from '../members/schemas.ts';
import {
  effectivePermissions,
  inviteMember,
  listClientPermissions,
  listMembers,
  type Member,
  MULTIPLE_ROLES_ENABLED,
  organizationRole,
  organizationRoles,
  removeMember,
  resendMemberInvitation,
  revokeMemberInvitation,
  toOrganizationMember,
  updateMemberRoles,
} from '../members/service.ts';
import { declared } from '../variants.ts';

const UserIdInput = z.object({ userId: Id });

/** The users table's lists as GraphQL reads them (`Normal` reads upward, as the widget does). */
const members = (list: Listed<Member>) => graphqlList({ ...list, data: list.data.map(toOrganizationMember) });

/** `client.members.*`: the GraphQL operations with the GraphQL shapes (`__typename` on unions). */
export const membersClientProcedures = {
  list: clientProcedure
    .input(GraphQLPageArgs.extend({ roleSlug: Text.nullish(), search: Text.nullish() }))
    .query(async ({ ctx, input }) =>
      members(
        await listMembers(ctx.scope, {
          ...pageOfGraphQLArgs(input, 'asc'),
          roleSlug: input.roleSlug ?? undefined,
          search: input.search ?? undefined,
        }),
      ),
    ),
  roles: clientProcedure.query(async ({ ctx }) => ({
    roles: await organizationRoles(ctx.scope),
    multipleRolesEnabled: MULTIPLE_ROLES_ENABLED,
  })),
  role: clientProcedure.input(z.object({ id: Id })).query(({ ctx, input }) => organizationRole(ctx.scope, input.id)),
  permissions: clientProcedure.input(GraphQLPageArgs.extend({ search: Text.nullish() })).query(async ({ ctx, input }) =>
    graphqlList(
      await listClientPermissions(ctx.scope, {
        ...pageOfGraphQLArgs(input, 'asc'),
        search: input.search ?? undefined,
      }),
    ),
  ),
  effectivePermissions: clientProcedure
    .input(UserIdInput)
    .query(({ ctx, input }) => effectivePermissions(ctx.scope, input.userId)),
  invite: clientProcedure
    .input(z.object({ email: Text, roleSlug: Text.optional(), expiresInDays: z.number().int().optional() }))
    .mutation(({ ctx, input }) =>
      declared('inviteUser', async () => ({
        __typename: 'UserInvited' as const,
        invitation: await inviteMember(ctx.scope, input),
      })),
    ),
  resendInvitation: clientProcedure.input(UserIdInput).mutation(({ ctx, input }) =>
    declared('resendInvitation', async () => ({
      __typename: 'InvitationResent' as const,
      invitation: await resendMemberInvitation(ctx.scope, input.userId),
    })),
  ),
  revokeInvitation: clientProcedure.input(UserIdInput).mutation(({ ctx, input }) =>
    declared('revokeInvitation', async () => ({
      __typename: 'InvitationRevoked' as const,
      invitation: await revokeMemberInvitation(ctx.scope, input.userId),
    })),
  ),
  remove: clientProcedure.input(UserIdInput).mutation(({ ctx, input }) =>
    declared('removeMember', async () => ({
      __typename: 'MemberRemoved' as const,
      ...(await removeMember(ctx.scope, input.userId)),
    })),
  ),
  updateRole: clientProcedure.input(UserIdInput.extend({ roleSlugs: RoleSlugs })).mutation(({ ctx, input }) =>
    declared('updateMemberRole', async () => ({
      __typename: 'MemberRoleUpdated' as const,
      member: toOrganizationMember(await updateMemberRoles(ctx.scope, input.userId, input.roleSlugs)),
    })),
  ),
};
