import {
  type ClientInvitation,
  type ClientPermission,
  type ClientRole,
  MEMBER_STATUSES,
  type toOrganizationMember,
} from '../members/service.ts';
import type { ClientBuilder } from './builder.ts';
import { procedures } from './caller.ts';
import type { PagingTypes } from './paging.ts';

// The users table (WIDGETS-API.md section 4): members, invitations, roles, permissions.

type OrganizationMemberShape = ReturnType<typeof toOrganizationMember>;
/** A mutation's answer: one variant of its declared union (client-api/variants.ts). */
type Variant = Record<string, unknown> & { __typename: string };

export function memberTypes(builder: ClientBuilder, { ListMetadataRef: ListMetadata, pageArgs }: PagingTypes) {
  const OrganizationMemberStatus = builder.enumType('OrganizationMemberStatus', { values: MEMBER_STATUSES });
  const OrganizationInvitationStatus = builder.enumType('OrganizationInvitationStatus', {
    values: ['Accepted', 'Expired', 'Pending', 'Revoked'] as const,
  });

  const OrganizationMemberRole = builder.objectRef<{ name: string; slug: string }>('OrganizationMemberRole').implement({
    fields: (t) => ({ name: t.exposeString('name'), slug: t.exposeString('slug') }),
  });
  const OrganizationMember = builder.objectRef<OrganizationMemberShape>('OrganizationMember').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      email: t.exposeString('email'),
      emailVerified: t.exposeBoolean('emailVerified'),
      firstName: t.exposeString('firstName', { nullable: true }),
      lastName: t.exposeString('lastName', { nullable: true }),
      profilePictureUrl: t.exposeString('profilePictureUrl', { nullable: true }),
      lastActivityAt: t.expose('lastActivityAt', { type: 'DateTime', nullable: true }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      roles: t.field({ type: [OrganizationMemberRole], resolve: (m) => m.roles }),
      status: t.field({ type: OrganizationMemberStatus, resolve: (m) => m.status }),
    }),
  });
  const OrganizationMemberList = builder
    .objectRef<{ data: OrganizationMemberShape[]; listMetadata: { before: string | null; after: string | null } }>(
      'OrganizationMemberList',
    )
    .implement({
      fields: (t) => ({
        data: t.field({ type: [OrganizationMember], resolve: (l) => l.data }),
        listMetadata: t.field({ type: ListMetadata, resolve: (l) => l.listMetadata }),
      }),
    });

  const OrganizationInvitation = builder.objectRef<ClientInvitation>('OrganizationInvitation').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      email: t.exposeString('email'),
      status: t.field({ type: OrganizationInvitationStatus, resolve: (i) => i.status }),
      roleSlug: t.exposeString('roleSlug', { nullable: true }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const Role = builder.objectRef<ClientRole>('Role').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      slug: t.exposeString('slug'),
      description: t.exposeString('description', { nullable: true }),
      isDefault: t.exposeBoolean('isDefault'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    }),
  });
  const RolesResult = builder
    .objectRef<{ roles: ClientRole[]; multipleRolesEnabled: boolean }>('RolesResult')
    .implement({
      fields: (t) => ({
        roles: t.field({ type: [Role], resolve: (r) => r.roles }),
        multipleRolesEnabled: t.exposeBoolean('multipleRolesEnabled'),
      }),
    });

  const Permission = builder.objectRef<ClientPermission>('Permission').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      slug: t.exposeString('slug'),
      description: t.exposeString('description', { nullable: true }),
      system: t.exposeBoolean('system'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    }),
  });
  const PermissionList = builder
    .objectRef<{ data: ClientPermission[]; listMetadata: { before: string | null; after: string | null } }>(
      'PermissionList',
    )
    .implement({
      fields: (t) => ({
        data: t.field({ type: [Permission], resolve: (l) => l.data }),
        listMetadata: t.field({ type: ListMetadata, resolve: (l) => l.listMetadata }),
      }),
    });

  builder.queryFields((t) => ({
    organizationMemberships: t.field({
      type: OrganizationMemberList,
      args: { ...pageArgs(t), roleSlug: t.arg.string(), search: t.arg.string() },
      resolve: (_root, args, ctx) => procedures.members.list(ctx, args),
    }),
    roles: t.field({ type: RolesResult, resolve: (_root, _args, ctx) => procedures.members.roles(ctx) }),
    role: t.field({
      type: Role,
      nullable: true,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.members.role(ctx, { id: String(args.id) }),
    }),
    permissions: t.field({
      type: PermissionList,
      args: { ...pageArgs(t), search: t.arg.string() },
      resolve: (_root, args, ctx) => procedures.members.permissions(ctx, args),
    }),
    effectivePermissions: t.field({
      type: [Permission],
      args: { userId: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.members.effectivePermissions(ctx, { userId: String(args.userId) }),
    }),
  }));

  /** A variant of one payload field (`email`, `userId`, `roleSlug`), or of `_placeholder` alone. */
  const variant = (
    name: string,
    field = '_placeholder',
    type: 'String' | 'ID' | 'Boolean' = 'Boolean',
    nullable = false,
  ) =>
    builder.objectRef<Variant>(name).implement({
      fields: (t) => ({
        [field]: t.field({
          type,
          nullable: nullable || field === '_placeholder',
          resolve: (v) => (v[field] ?? null) as never,
        }),
      }),
    });

  const withInvitation = (name: string) =>
    builder.objectRef<Variant>(name).implement({
      fields: (t) => ({
        invitation: t.field({ type: OrganizationInvitation, resolve: (v) => v.invitation as ClientInvitation }),
      }),
    });

  const union = (name: string, types: ReturnType<typeof variant>[]) =>
    builder.unionType(name, { types, resolveType: (value) => (value as Variant).__typename });

  const InviteeEmailNotDeliverable = variant('InviteeEmailNotDeliverable', 'email', 'String');
  const InviteUserResult = union('InviteUserResult', [
    withInvitation('UserInvited'),
    variant('InviteeAlreadyMember', 'email', 'String'),
    variant('InviteeAlreadyInvited', 'email', 'String'),
    variant('InvalidInviteeEmail', 'email', 'String'),
    variant('InvalidInviteeRole', 'roleSlug', 'String', true),
    InviteeEmailNotDeliverable,
    variant('InvalidInvitationExpiry'),
    variant('OrganizationBlockedFromSendingInvites'),
  ]);
  const ResendInvitationResult = union('ResendInvitationResult', [
    withInvitation('InvitationResent'),
    variant('InviteeAlreadyAccepted', 'userId', 'ID'),
    InviteeEmailNotDeliverable,
    variant('ResendInvitationNotFound', 'userId', 'ID'),
  ]);
  const RevokeInvitationResult = union('RevokeInvitationResult', [
    withInvitation('InvitationRevoked'),
    variant('InvitationNotFound', 'userId', 'ID'),
    variant('InvitationNotPending', 'userId', 'ID'),
  ]);
  const MemberNotFound = variant('MemberNotFound', 'userId', 'ID');
  const RemoveMemberResult = union('RemoveMemberResult', [
    variant('MemberRemoved', 'userId', 'ID'),
    MemberNotFound,
    variant('MemberIsManagedByDirectory', 'userId', 'ID'),
  ]);
  const MemberRoleUpdated = builder.objectRef<Variant>('MemberRoleUpdated').implement({
    fields: (t) => ({
      member: t.field({ type: OrganizationMember, resolve: (v) => v.member as OrganizationMemberShape }),
    }),
  });
  const RoleNotFound = builder.objectRef<Variant>('RoleNotFound').implement({
    fields: (t) => ({ roleSlugs: t.stringList({ resolve: (v) => v.roleSlugs as string[] }) }),
  });
  const UpdateMemberRoleResult = union('UpdateMemberRoleResult', [MemberRoleUpdated, MemberNotFound, RoleNotFound]);

  const InviteUserInput = builder.inputType('InviteUserInput', {
    fields: (t) => ({ email: t.string({ required: true }), roleSlug: t.string(), expiresInDays: t.int() }),
  });
  const userIdInput = (name: string) =>
    builder.inputType(name, { fields: (t) => ({ userId: t.id({ required: true }) }) });
  const ResendInvitationInput = userIdInput('ResendInvitationInput');
  const RevokeInvitationInput = userIdInput('RevokeInvitationInput');
  const RemoveMemberInput = userIdInput('RemoveMemberInput');
  const UpdateMemberRoleInput = builder.inputType('UpdateMemberRoleInput', {
    fields: (t) => ({ userId: t.id({ required: true }), roleSlugs: t.stringList({ required: true }) }),
  });

  builder.mutationFields((t) => ({
    inviteUser: t.field({
      type: InviteUserResult,
      args: { input: t.arg({ type: InviteUserInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        procedures.members.invite(ctx, {
          email: input.email,
          roleSlug: input.roleSlug ?? undefined,
          expiresInDays: input.expiresInDays ?? undefined,
        }),
    }),
    resendInvitation: t.field({
      type: ResendInvitationResult,
      args: { input: t.arg({ type: ResendInvitationInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.members.resendInvitation(ctx, { userId: String(input.userId) }),
    }),
    revokeInvitation: t.field({
      type: RevokeInvitationResult,
      args: { input: t.arg({ type: RevokeInvitationInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.members.revokeInvitation(ctx, { userId: String(input.userId) }),
    }),
    removeMember: t.field({
      type: RemoveMemberResult,
      args: { input: t.arg({ type: RemoveMemberInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.members.remove(ctx, { userId: String(input.userId) }),
    }),
    updateMemberRole: t.field({
      type: UpdateMemberRoleResult,
      args: { input: t.arg({ type: UpdateMemberRoleInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        procedures.members.updateRole(ctx, { userId: String(input.userId), roleSlugs: input.roleSlugs }),
    }),
  }));
}
