import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { badRequest, forbidden } from '../../kernel/errors.ts';
import type { ClientScope } from '../../kernel/principals.ts';
import { clientProcedure } from '../../trpc.ts';
import type { User } from '../../users/schemas.ts';
import { builder } from '../graphql/builder.ts';
import { OAUTH_PROVIDERS } from '../sso/router.ts';
import { getMe, getOrganizationUser, ownPasswordSet, type ProfileChanges, updateProfile } from './service.ts';

/** The widgets' Me (WIDGETS-API.md §2.2); Atrium keeps no OAuth profiles. */
export const Me = z.object({
  id: z.string(),
  email: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  locale: z.string().nullable(),
  profilePictureUrl: z.string().nullable(),
  oauthProfiles: z.null(),
});

export const toMe = (user: User): z.infer<typeof Me> => ({
  id: user.id,
  email: user.email,
  firstName: user.first_name,
  lastName: user.last_name,
  locale: user.locale,
  profilePictureUrl: user.profile_picture_url,
  oauthProfiles: null,
});

/** A profile field as sent: bounded here, checked by the users service's rules. */
const ProfileField = z.string().max(1024).nullish();
const UpdateMeInput = z.object({ firstName: ProfileField, lastName: ProfileField, locale: ProfileField });

/** REST's answer to an invalid locale: 400 (the widgets show the message). */
async function updateMe(scope: ClientScope, changes: ProfileChanges): Promise<User> {
  const result = await updateProfile(scope, changes);
  if (result.kind === 'invalid_locale') throw badRequest('invalid_locale', result.message);
  return result.user;
}

/** REST for the UserProfile widget (WIDGETS-API.md §2.1 rows 13-14). */
export const profileWidgetProcedures = {
  me: clientProcedure
    .meta({ openapi: { method: 'GET', path: '/_widgets/UserProfile/me', tags: ['Widgets'], summary: 'The caller' } })
    .input(z.object({}))
    .output(Me)
    .query(async ({ ctx }) => toMe(await getMe(ctx.scope))),

  updateMe: clientProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/_widgets/UserProfile/me',
        tags: ['Widgets'],
        summary: "Update the caller's names and locale",
      },
    })
    .input(UpdateMeInput)
    .output(Me)
    .mutation(async ({ ctx, input }) => toMe(await updateMe(ctx.scope, input))),
};

/** GraphQL's User (WIDGETS-API.md §4); `self` marks the caller's own, the only one with password facts. */
export interface ClientUser {
  user: User;
  self: boolean;
}

export const ClientUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  profilePictureUrl: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  connectedAccounts: z.array(z.never()),
});

export const toClientUser = (user: User): z.infer<typeof ClientUserSchema> => ({
  id: user.id,
  email: user.email,
  emailVerified: user.email_verified,
  firstName: user.first_name,
  lastName: user.last_name,
  profilePictureUrl: user.profile_picture_url,
  createdAt: user.created_at,
  updatedAt: user.updated_at,
  connectedAccounts: [],
});

/** GraphQL's UpdateProfileResult, also typed tRPC's `client.updateProfile`. */
async function updateProfileResult(scope: ClientScope, changes: ProfileChanges) {
  const result = await updateProfile(scope, changes);
  return result.kind === 'updated'
    ? { __typename: 'ProfileUpdated' as const, user: { user: result.user, self: true } }
    : { __typename: 'InvalidLocale' as const, _placeholder: true };
}

/** Typed tRPC (`client.*`), the same operations and shapes as GraphQL. */
export const profileClientProcedures = {
  me: clientProcedure.output(ClientUserSchema).query(async ({ ctx }) => toClientUser(await getMe(ctx.scope))),
  user: clientProcedure
    .input(z.object({ id: Id }))
    .output(ClientUserSchema)
    .query(async ({ ctx, input }) => toClientUser(await getOrganizationUser(ctx.scope, input.id))),
  updateProfile: clientProcedure
    .input(UpdateMeInput)
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('ProfileUpdated'), user: ClientUserSchema }),
        z.object({ __typename: z.literal('InvalidLocale'), _placeholder: z.boolean() }),
      ]),
    )
    .mutation(async ({ ctx, input }) => {
      const result = await updateProfileResult(ctx.scope, input);
      return result.__typename === 'ProfileUpdated' ? { ...result, user: toClientUser(result.user.user) } : result;
    }),
};

// GraphQL (WIDGETS-API.md §4).
const OAuthProviderRef = builder.enumType('OAuthProvider', { values: OAUTH_PROVIDERS });

/** An OAuth account linked to a user; Atrium links none, so lists of these are empty. */
const ConnectedAccountRef = builder.objectRef<never>('ConnectedAccount').implement({
  fields: (t) => ({
    id: t.id({ resolve: () => '' }),
    provider: t.field({ type: OAuthProviderRef, resolve: () => 'GoogleOAuth' as const }),
    email: t.string({ nullable: true, resolve: () => null }),
    firstName: t.string({ nullable: true, resolve: () => null }),
    lastName: t.string({ nullable: true, resolve: () => null }),
    profilePictureUrl: t.string({ nullable: true, resolve: () => null }),
    lastLoginAt: t.field({ type: 'DateTime', nullable: true, resolve: () => null }),
  }),
});

/** The password and MFA facts are the caller's own: asked of another user, the field is FORBIDDEN. */
const ownOnly = <T>(parent: ClientUser, value: () => T): T => {
  if (!parent.self) throw forbidden('forbidden', "Only the caller's own user carries its password and MFA facts.");
  return value();
};

export const UserRef = builder.objectRef<ClientUser>('User').implement({
  fields: (t) => ({
    id: t.id({ resolve: ({ user }) => user.id }),
    email: t.string({ resolve: ({ user }) => user.email }),
    emailVerified: t.boolean({ resolve: ({ user }) => user.email_verified }),
    firstName: t.string({ nullable: true, resolve: ({ user }) => user.first_name }),
    lastName: t.string({ nullable: true, resolve: ({ user }) => user.last_name }),
    profilePictureUrl: t.string({ nullable: true, resolve: ({ user }) => user.profile_picture_url }),
    createdAt: t.field({ type: 'DateTime', resolve: ({ user }) => user.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: ({ user }) => user.updated_at }),
    connectedAccounts: t.field({ type: [ConnectedAccountRef], resolve: () => [] }),
    mfaEnabled: t.boolean({ resolve: (parent) => ownOnly(parent, () => false) }),
    passwordSet: t.boolean({ resolve: (parent, _args, ctx) => ownOnly(parent, () => ownPasswordSet(ctx.scope)) }),
    mfaLastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (parent) => ownOnly(parent, () => null) }),
    passwordLastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (parent) => ownOnly(parent, () => null) }),
  }),
});

type ProfileOutcome = Awaited<ReturnType<typeof updateProfileResult>>;
const ProfileUpdatedRef = builder
  .objectRef<Extract<ProfileOutcome, { __typename: 'ProfileUpdated' }>>('ProfileUpdated')
  .implement({ fields: (t) => ({ user: t.expose('user', { type: UserRef }) }) });
const InvalidLocaleRef = builder
  .objectRef<Extract<ProfileOutcome, { __typename: 'InvalidLocale' }>>('InvalidLocale')
  .implement({ fields: (t) => ({ _placeholder: t.exposeBoolean('_placeholder') }) });
const UpdateProfileResult = builder.unionType('UpdateProfileResult', {
  types: [ProfileUpdatedRef, InvalidLocaleRef],
  resolveType: (value) => value.__typename,
});

const UpdateProfileInput = builder.inputType('UpdateProfileInput', {
  fields: (t) => ({ firstName: t.string(), lastName: t.string(), locale: t.string() }),
});

builder.queryField('me', (t) =>
  t.field({ type: UserRef, resolve: async (_root, _args, ctx) => ({ user: await getMe(ctx.scope), self: true }) }),
);

builder.queryField('user', (t) =>
  t.field({
    type: UserRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      const user = await getOrganizationUser(ctx.scope, String(id));
      return { user, self: user.id === ctx.scope.client.userId };
    },
  }),
);

builder.mutationField('updateProfile', (t) =>
  t.field({
    type: UpdateProfileResult,
    args: { input: t.arg({ type: UpdateProfileInput, required: true }) },
    resolve: (_root, { input }, ctx) => updateProfileResult(ctx.scope, input),
  }),
);
