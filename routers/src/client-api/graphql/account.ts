import type { PasswordViolation } from '../account/schemas.ts';
import type { ClientUser } from '../profile/schemas.ts';
import type { ClientBuilder } from './builder.ts';
import { procedures } from './caller.ts';
import type { profileTypes } from './profile.ts';

/** A mutation's answer: its success, or a declared variant of a refusal (client-api/variants.ts), each with its message. */
type Outcome = { __typename: string; [field: string]: unknown };

/**
 * The caller's account (the widgets package's client schema): UserProfile's "Edit email",
 * UserSecurity's "Change password".
 */
export function accountTypes(builder: ClientBuilder, { UserRef }: ReturnType<typeof profileTypes>) {
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
        ...(withUser
          ? { user: t.field({ type: UserRef, resolve: (v) => ({ ...(v.user as ClientUser), self: true }) }) }
          : {}),
      }),
    });
  const EmailChangeSent = builder.objectRef<Outcome>('EmailChangeSent').implement({
    fields: (t) => ({ expiresAt: t.field({ type: 'DateTime', resolve: (v) => String(v.expiresAt) }) }),
  });
  const PasswordCharacterType = builder.enumType('PasswordCharacterType', {
    values: ['Lowercase', 'Number', 'Symbol', 'Uppercase'] as const,
  });
  const PasswordViolationRef = builder.objectRef<PasswordViolation>('PasswordViolation').implement({
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
      code: t.string({ resolve: (v) => String(v.code) }),
      message: t.string({ resolve: (v) => String(v.message) }),
      violations: t.field({ type: [PasswordViolationRef], resolve: (v) => v.violations as PasswordViolation[] }),
    }),
  });

  const SendVerificationCodeResult = union('SendVerificationCodeResult', [
    DailyEmailQuotaExceeded,
    VerificationCodeSent,
  ]);
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
      resolve: (_root, _args, ctx) => procedures.account.sendVerificationCode(ctx),
    }),
    verifyCurrentEmail: t.field({
      type: VerifyCurrentEmailResult,
      args: { input: t.arg({ type: VerifyCurrentEmailInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        procedures.account.verifyCurrentEmail(ctx, {
          authenticationChallengeId: String(input.authenticationChallengeId),
          code: input.code,
        }),
    }),
    sendEmailChange: t.field({
      type: SendEmailChangeResult,
      args: { input: t.arg({ type: SendEmailChangeInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.account.sendEmailChange(ctx, input),
    }),
    confirmEmailChange: t.field({
      type: ConfirmEmailChangeResult,
      args: { input: t.arg({ type: ConfirmEmailChangeInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.account.confirmEmailChange(ctx, input),
    }),
    updatePassword: t.field({
      type: UpdatePasswordResult,
      args: { input: t.arg({ type: UpdatePasswordInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.account.updatePassword(ctx, input),
    }),
    createPassword: t.field({
      type: CreatePasswordResult,
      args: { input: t.arg({ type: CreatePasswordInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.account.createPassword(ctx, input),
    }),
  }));
}
