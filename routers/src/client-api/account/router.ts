import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import type { User } from '../../users/schemas.ts';
import { builder } from '../graphql/builder.ts';
import { ClientUserSchema, Me, toClientUser, toMe, UserRef } from '../profile/router.ts';
import {
  authenticationInformation,
  confirmEmailChange,
  createOwnPassword,
  restOf,
  sendEmailChangeCode,
  sendIdentityCode,
  updateOwnPassword,
  verifyIdentityCode,
} from './service.ts';

// The caller's account on the three client surfaces: "Edit email" of the UserProfile widget and
// "Change password" of UserSecurity. Widgets REST (refusals as statuses), typed tRPC
// `client.account.*` and GraphQL (refusals as the declared variants).

const route = (method: 'GET' | 'POST', path: string, summary: string) => ({
  openapi: { method, path: `/_widgets/UserProfile/${path}` as const, tags: ['Widgets'], summary },
});

/** A mailed code as typed (six digits; anything else is simply not right). */
const Code = z.string().max(64);
const Token = z.string().max(256);
const NewEmail = z.string().max(1024);
const Password = z.string().max(4096);

const ElevatedAccess = z.object({ elevatedAccessToken: z.string(), expiresAt: z.string() });

const AuthenticationInformation = z.object({
  data: z.object({
    verificationMethods: z.object({
      Password: z.object({
        provider: z.literal('Password'),
        isSetUp: z.boolean(),
        lastUsed: z.string().nullable(),
        isCurrentSession: z.boolean(),
      }),
    }),
    passwordSettings: z.object({
      isPasswordNumberRequired: z.boolean(),
      isPasswordPwnedRequired: z.boolean(),
      isPasswordSymbolRequired: z.boolean(),
      isPasswordUppercaseRequired: z.boolean(),
      passwordMinimumLength: z.number(),
      passwordMinimumStrength: z.number(),
    }),
  }),
});

/** REST for the UserProfile widget's "Edit email" (WIDGETS-API.md section 2.1, after row 20); elevated access comes as `x-elevated-access-token`. */
export const accountWidgetProcedures = {
  authenticationInformation: clientProcedure
    .meta(route('GET', 'authentication-information', "The caller's sign-in methods and password policy"))
    .input(z.object({}))
    .output(AuthenticationInformation)
    .query(({ ctx }) => authenticationInformation(ctx.scope)),

  sendVerification: clientProcedure
    .meta(route('POST', 'send-verification', "Mail a code to the caller's current e-mail address"))
    .input(z.object({}))
    .output(z.object({ authenticationChallenge: z.string(), type: z.literal('EmailVerification') }))
    .mutation(async ({ ctx }) => {
      const sent = restOf(await sendIdentityCode(ctx.scope));
      return { authenticationChallenge: sent.authenticationChallengeId, type: 'EmailVerification' as const };
    }),

  verify: clientProcedure
    .meta(route('POST', 'verify', 'Check the code; a right one grants elevated access'))
    .input(z.object({ code: Code, authenticationChallengeId: Id }))
    .output(ElevatedAccess)
    .mutation(async ({ ctx, input }) =>
      restOf(await verifyIdentityCode(ctx.scope, input.authenticationChallengeId, input.code)),
    ),

  sendEmailChange: clientProcedure
    .meta(route('POST', 'send-email-change', 'Mail a code to the new e-mail address (elevated access)'))
    .input(z.object({ newEmail: NewEmail }))
    .output(z.object({ expiresAt: z.string() }))
    .mutation(async ({ ctx, input }) =>
      restOf(await sendEmailChangeCode(ctx.scope, ctx.elevatedAccess, input.newEmail)),
    ),

  verifyEmailChange: clientProcedure
    .meta(route('POST', 'verify-email-change', "Check the new address's code and change to it (elevated access)"))
    .input(z.object({ code: Code }))
    .output(ElevatedAccess.extend({ user: Me }))
    .mutation(async ({ ctx, input }) => {
      const { user, ...access } = restOf(await confirmEmailChange(ctx.scope, ctx.elevatedAccess, input.code));
      return { user: toMe(user), ...access };
    }),

  createPassword: clientProcedure
    .meta({ ...route('POST', 'create-password', 'Set a first password (elevated access)'), successStatus: 201 })
    .input(z.object({ password: Password }))
    .output(z.object({ success: z.boolean() }))
    .mutation(async ({ ctx, input }) => restOf(await createOwnPassword(ctx.scope, ctx.elevatedAccess, input.password))),

  // The UserSecurity widget's "Change password".
  updatePassword: clientProcedure
    .meta({ ...route('POST', 'update-password', "Change the caller's password"), successStatus: 201 })
    .input(z.object({ currentPassword: Password, newPassword: Password }))
    .output(z.object({ success: z.boolean() }))
    .mutation(async ({ ctx, input }) =>
      restOf(await updateOwnPassword(ctx.scope, input.currentPassword, input.newPassword)),
    ),
};

// Typed tRPC: the GraphQL mutations' results, as discriminated unions.
const said = <T extends string>(name: T) => z.object({ __typename: z.literal(name), message: z.string() });
const PasswordViolation = z.object({
  code: z.string(),
  message: z.string(),
  minimumLength: z.number().nullable(),
  maximumLength: z.number().nullable(),
  strengthSuggestions: z.array(z.string()),
});

export const accountClientProcedures = {
  sendVerificationCode: clientProcedure
    .output(
      z.discriminatedUnion('__typename', [
        z.object({
          __typename: z.literal('VerificationCodeSent'),
          authenticationChallengeId: z.string(),
          expiresAt: z.string(),
        }),
        said('DailyEmailQuotaExceeded'),
      ]),
    )
    .mutation(({ ctx }) => sendIdentityCode(ctx.scope)),

  verifyCurrentEmail: clientProcedure
    .input(z.object({ authenticationChallengeId: Id, code: Code }))
    .output(
      z.discriminatedUnion('__typename', [
        ElevatedAccess.extend({ __typename: z.literal('CurrentEmailVerified') }),
        said('VerificationCodeExpired'),
        said('VerificationCodeIncorrect'),
        said('VerificationCodePreviouslyUsed'),
        said('VerificationTooManyAttempts'),
      ]),
    )
    .mutation(({ ctx, input }) => verifyIdentityCode(ctx.scope, input.authenticationChallengeId, input.code)),

  sendEmailChange: clientProcedure
    .input(z.object({ elevatedAccessToken: Token, newEmail: NewEmail }))
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('EmailChangeSent'), expiresAt: z.string() }),
        said('DailyEmailQuotaExceeded'),
        said('EmailManagedByProvider'),
        said('EmailNotAvailable'),
        said('IdentityVerificationExpired'),
        said('IdentityVerificationInvalid'),
        said('InvalidEmail'),
      ]),
    )
    .mutation(({ ctx, input }) => sendEmailChangeCode(ctx.scope, input.elevatedAccessToken, input.newEmail)),

  confirmEmailChange: clientProcedure
    .input(z.object({ elevatedAccessToken: Token, code: Code }))
    .output(
      z.discriminatedUnion('__typename', [
        ElevatedAccess.extend({ __typename: z.literal('EmailChangeConfirmed'), user: ClientUserSchema }),
        said('EmailChangeCodeExpired'),
        said('EmailChangeCodeIncorrect'),
        said('EmailChangeCodePreviouslyUsed'),
        said('EmailChangeTooManyAttempts'),
        said('EmailManagedByProvider'),
        said('EmailNotAvailable'),
        said('IdentityVerificationExpired'),
        said('IdentityVerificationInvalid'),
        said('NoPendingEmailChange'),
      ]),
    )
    .mutation(async ({ ctx, input }) => {
      const outcome = await confirmEmailChange(ctx.scope, input.elevatedAccessToken, input.code);
      return 'user' in outcome ? { ...outcome, user: toClientUser(outcome.user) } : outcome;
    }),

  createPassword: clientProcedure
    .input(z.object({ elevatedAccessToken: Token, password: Password }))
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('PasswordCreated'), success: z.boolean() }),
        said('ElevatedAccessTokenExpired'),
        said('ElevatedAccessTokenInvalid'),
        z.object({ __typename: z.literal('UserAlreadyHasPassword'), _placeholder: z.boolean() }),
        said('PasswordPolicyViolation').extend({ code: z.string(), violations: z.array(PasswordViolation) }),
      ]),
    )
    .mutation(async ({ ctx, input }) => {
      const outcome = await createOwnPassword(ctx.scope, input.elevatedAccessToken, input.password);
      return 'violationCode' in outcome ? { ...outcome, code: outcome.violationCode } : outcome;
    }),

  updatePassword: clientProcedure
    .input(z.object({ currentPassword: Password, newPassword: Password }))
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('PasswordUpdated'), success: z.boolean() }),
        z.object({ __typename: z.literal('IncorrectPassword'), _placeholder: z.boolean() }),
        said('PasswordPolicyViolation').extend({ code: z.string(), violations: z.array(PasswordViolation) }),
      ]),
    )
    .mutation(async ({ ctx, input }) => {
      const outcome = await updateOwnPassword(ctx.scope, input.currentPassword, input.newPassword);
      return 'violationCode' in outcome ? { ...outcome, code: outcome.violationCode } : outcome;
    }),
};

// GraphQL (the widgets package's client schema): refusals are the declared variants, each with its message.
type Outcome = { __typename: string; [field: string]: unknown };

const messageVariant = (name: string) =>
  builder.objectRef<Outcome>(name).implement({
    fields: (t) => ({ message: t.string({ resolve: (v) => String(v.message) }) }),
  });

const union = (name: string, types: ReturnType<typeof messageVariant>[]) =>
  builder.unionType(name, { types, resolveType: (value) => (value as Outcome).__typename });

const DailyEmailQuotaExceeded = messageVariant('DailyEmailQuotaExceeded');
const EmailNotAvailable = messageVariant('EmailNotAvailable');
const EmailManagedByProvider = messageVariant('EmailManagedByProvider');
const IdentityVerificationExpired = messageVariant('IdentityVerificationExpired');
const IdentityVerificationInvalid = messageVariant('IdentityVerificationInvalid');
const InvalidEmail = messageVariant('InvalidEmail');

const VerificationCodeSent = builder.objectRef<Outcome>('VerificationCodeSent').implement({
  fields: (t) => ({
    authenticationChallengeId: t.id({ resolve: (v) => String(v.authenticationChallengeId) }),
    expiresAt: t.field({ type: 'DateTime', resolve: (v) => String(v.expiresAt) }),
  }),
});
const elevatedFields = (name: string, withUser = false) =>
  builder.objectRef<Outcome>(name).implement({
    fields: (t) => ({
      elevatedAccessToken: t.string({ resolve: (v) => String(v.elevatedAccessToken) }),
      expiresAt: t.string({ resolve: (v) => String(v.expiresAt) }),
      ...(withUser ? { user: t.field({ type: UserRef, resolve: (v) => ({ user: v.user as User, self: true }) }) } : {}),
    }),
  });
const EmailChangeSent = builder.objectRef<Outcome>('EmailChangeSent').implement({
  fields: (t) => ({ expiresAt: t.field({ type: 'DateTime', resolve: (v) => String(v.expiresAt) }) }),
});
const PasswordCharacterType = builder.enumType('PasswordCharacterType', {
  values: ['Lowercase', 'Number', 'Symbol', 'Uppercase'] as const,
});
type Violation = z.infer<typeof PasswordViolation>;
const PasswordViolationRef = builder.objectRef<Violation>('PasswordViolation').implement({
  fields: (t) => ({
    code: t.exposeString('code'),
    message: t.exposeString('message'),
    minimumLength: t.int({ nullable: true, resolve: (v) => v.minimumLength }),
    maximumLength: t.int({ nullable: true, resolve: (v) => v.maximumLength }),
    strengthSuggestions: t.stringList({ resolve: (v) => v.strengthSuggestions }),
    strengthWarning: t.string({ nullable: true, resolve: () => null }),
    allowedSymbols: t.string({ nullable: true, resolve: () => null }),
    breachOccurrences: t.int({ nullable: true, resolve: () => null }),
    characterType: t.field({ type: PasswordCharacterType, nullable: true, resolve: () => null }),
  }),
});
const PasswordPolicyViolation = builder.objectRef<Outcome>('PasswordPolicyViolation').implement({
  fields: (t) => ({
    code: t.string({ resolve: (v) => String(v.violationCode) }),
    message: t.string({ resolve: (v) => String(v.message) }),
    violations: t.field({ type: [PasswordViolationRef], resolve: (v) => v.violations as Violation[] }),
  }),
});

const SendVerificationCodeResult = union('SendVerificationCodeResult', [DailyEmailQuotaExceeded, VerificationCodeSent]);
const VerifyCurrentEmailResult = union('VerifyCurrentEmailResult', [
  elevatedFields('CurrentEmailVerified'),
  messageVariant('VerificationCodeExpired'),
  messageVariant('VerificationCodeIncorrect'),
  messageVariant('VerificationCodePreviouslyUsed'),
  messageVariant('VerificationTooManyAttempts'),
]);
const SendEmailChangeResult = union('SendEmailChangeResult', [
  DailyEmailQuotaExceeded,
  messageVariant('EmailChangeNotAvailable'),
  EmailChangeSent,
  EmailManagedByProvider,
  EmailNotAvailable,
  IdentityVerificationExpired,
  IdentityVerificationInvalid,
  InvalidEmail,
]);
const ConfirmEmailChangeResult = union('ConfirmEmailChangeResult', [
  messageVariant('EmailChangeCodeExpired'),
  messageVariant('EmailChangeCodeIncorrect'),
  messageVariant('EmailChangeCodePreviouslyUsed'),
  elevatedFields('EmailChangeConfirmed', true),
  messageVariant('EmailChangeTooManyAttempts'),
  EmailManagedByProvider,
  EmailNotAvailable,
  IdentityVerificationExpired,
  IdentityVerificationInvalid,
  InvalidEmail,
  messageVariant('NoPendingEmailChange'),
]);
const CreatePasswordResult = union('CreatePasswordResult', [
  messageVariant('ElevatedAccessTokenExpired'),
  messageVariant('ElevatedAccessTokenInvalid'),
  builder.objectRef<Outcome>('PasswordCreated').implement({
    fields: (t) => ({ success: t.boolean({ resolve: (v) => Boolean(v.success) }) }),
  }),
  PasswordPolicyViolation,
  builder.objectRef<Outcome>('UserAlreadyHasPassword').implement({
    fields: (t) => ({ _placeholder: t.boolean({ resolve: () => true }) }),
  }),
]);

const UpdatePasswordResult = union('UpdatePasswordResult', [
  builder.objectRef<Outcome>('IncorrectPassword').implement({
    fields: (t) => ({ _placeholder: t.boolean({ resolve: () => true }) }),
  }),
  PasswordPolicyViolation,
  builder.objectRef<Outcome>('PasswordUpdated').implement({
    fields: (t) => ({ success: t.boolean({ resolve: (v) => Boolean(v.success) }) }),
  }),
]);

const VerifyCurrentEmailInput = builder.inputType('VerifyCurrentEmailInput', {
  fields: (t) => ({ authenticationChallengeId: t.id({ required: true }), code: t.string({ required: true }) }),
});
const SendEmailChangeInput = builder.inputType('SendEmailChangeInput', {
  fields: (t) => ({ elevatedAccessToken: t.string({ required: true }), newEmail: t.string({ required: true }) }),
});
const ConfirmEmailChangeInput = builder.inputType('ConfirmEmailChangeInput', {
  fields: (t) => ({ code: t.string({ required: true }), elevatedAccessToken: t.string({ required: true }) }),
});
const UpdatePasswordInput = builder.inputType('UpdatePasswordInput', {
  fields: (t) => ({ currentPassword: t.string({ required: true }), newPassword: t.string({ required: true }) }),
});
const CreatePasswordInput = builder.inputType('CreatePasswordInput', {
  fields: (t) => ({ elevatedAccessToken: t.string({ required: true }), password: t.string({ required: true }) }),
});

builder.mutationFields((t) => ({
  sendVerificationCode: t.field({
    type: SendVerificationCodeResult,
    resolve: (_root, _args, ctx) => sendIdentityCode(ctx.scope),
  }),
  verifyCurrentEmail: t.field({
    type: VerifyCurrentEmailResult,
    args: { input: t.arg({ type: VerifyCurrentEmailInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      verifyIdentityCode(ctx.scope, String(input.authenticationChallengeId), input.code),
  }),
  sendEmailChange: t.field({
    type: SendEmailChangeResult,
    args: { input: t.arg({ type: SendEmailChangeInput, required: true }) },
    resolve: (_root, { input }, ctx) => sendEmailChangeCode(ctx.scope, input.elevatedAccessToken, input.newEmail),
  }),
  confirmEmailChange: t.field({
    type: ConfirmEmailChangeResult,
    args: { input: t.arg({ type: ConfirmEmailChangeInput, required: true }) },
    resolve: (_root, { input }, ctx) => confirmEmailChange(ctx.scope, input.elevatedAccessToken, input.code),
  }),
  updatePassword: t.field({
    type: UpdatePasswordResult,
    args: { input: t.arg({ type: UpdatePasswordInput, required: true }) },
    resolve: (_root, { input }, ctx) => updateOwnPassword(ctx.scope, input.currentPassword, input.newPassword),
  }),
  createPassword: t.field({
    type: CreatePasswordResult,
    args: { input: t.arg({ type: CreatePasswordInput, required: true }) },
    resolve: (_root, { input }, ctx) => createOwnPassword(ctx.scope, input.elevatedAccessToken, input.password),
  }),
}));
