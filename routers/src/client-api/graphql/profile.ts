import { forbidden } from '../../kernel/errors.ts';
import type { ClientUser } from '../profile/schemas.ts';
import type { ClientBuilder } from './builder.ts';
import { type ClientProcedures, callerUserId, procedures } from './caller.ts';
import { OAUTH_PROVIDERS } from './sso.ts';

/** GraphQL's User: `self` marks the caller's own, the only one with password facts. */
export type UserOf = ClientUser & { self: boolean };

/** The caller's and their organization's users, and the caller's profile (WIDGETS-API.md §4). */
export function profileTypes(builder: ClientBuilder) {
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
  const ownOnly = <T>(parent: UserOf, value: () => T): T => {
    if (!parent.self) throw forbidden('forbidden', "Only the caller's own user carries its password and MFA facts.");
    return value();
  };

  const UserRef = builder.objectRef<UserOf>('User').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      email: t.exposeString('email'),
      emailVerified: t.exposeBoolean('emailVerified'),
      firstName: t.exposeString('firstName', { nullable: true }),
      lastName: t.exposeString('lastName', { nullable: true }),
      profilePictureUrl: t.exposeString('profilePictureUrl', { nullable: true }),
      createdAt: t.field({ type: 'DateTime', resolve: (user) => user.createdAt }),
      updatedAt: t.field({ type: 'DateTime', resolve: (user) => user.updatedAt }),
      connectedAccounts: t.field({ type: [ConnectedAccountRef], resolve: () => [] }),
      mfaEnabled: t.boolean({ resolve: (parent) => ownOnly(parent, () => false) }),
      passwordSet: t.boolean({
        resolve: (parent, _args, ctx) => ownOnly(parent, () => procedures.passwordSet(ctx)),
      }),
      mfaLastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (parent) => ownOnly(parent, () => null) }),
      passwordLastUsedAt: t.field({
        type: 'DateTime',
        nullable: true,
        resolve: (parent) => ownOnly(parent, () => null),
      }),
    }),
  });

  type ProfileOutcome = Awaited<ReturnType<ClientProcedures['updateProfile']>>;
  const ProfileUpdatedRef = builder
    .objectRef<Extract<ProfileOutcome, { __typename: 'ProfileUpdated' }>>('ProfileUpdated')
    .implement({
      fields: (t) => ({ user: t.field({ type: UserRef, resolve: (v) => ({ ...v.user, self: true }) }) }),
    });
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

  builder.queryFields((t) => ({
    me: t.field({
      type: UserRef,
      resolve: async (_root, _args, ctx) => ({ ...(await procedures.me(ctx)), self: true }),
    }),
    user: t.field({
      type: UserRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: async (_root, { id }, ctx) => {
        const user = await procedures.user(ctx, { id: String(id) });
        // The verified caller's user (null for a portal session); asked of `me` only if the transport did not verify it.
        const known = callerUserId(ctx);
        const self = known === undefined ? (await procedures.me(ctx)).id : known;
        return { ...user, self: user.id === self };
      },
    }),
  }));

  builder.mutationField('updateProfile', (t) =>
    t.field({
      type: UpdateProfileResult,
      args: { input: t.arg({ type: UpdateProfileInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.updateProfile(ctx, input),
    }),
  );

  return { UserRef };
}
