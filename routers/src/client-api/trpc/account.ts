import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import {
  Code,
  ElevatedAccess,
  NewEmail,
  Password,
  PasswordViolation,
  Token,
  UpdatePasswordInput,
} from '../account/schemas.ts';
import {
  confirmEmailChange,
  createOwnPassword,
  sendEmailChangeCode,
  sendIdentityCode,
  updateOwnPassword,
  verifyIdentityCode,
} from '../account/service.ts';
import { ClientUser, toClientUser } from '../profile/schemas.ts';
import { declared } from '../variants.ts';

// `client.account.*`: the GraphQL mutations' results, as discriminated unions.
const said = <T extends string>(name: T) => z.object({ __typename: z.literal(name), message: z.string() });
const PasswordPolicyViolation = said('PasswordPolicyViolation').extend({
  code: z.string(),
  violations: z.array(PasswordViolation),
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
    .mutation(({ ctx }) =>
      declared('sendVerificationCode', async () => ({
        __typename: 'VerificationCodeSent' as const,
        ...(await sendIdentityCode(ctx.scope)),
      })),
    ),

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
    .mutation(({ ctx, input }) =>
      declared('verifyCurrentEmail', async () => ({
        __typename: 'CurrentEmailVerified' as const,
        ...(await verifyIdentityCode(ctx.scope, input.authenticationChallengeId, input.code)),
      })),
    ),

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
    .mutation(({ ctx, input }) =>
      declared('sendEmailChange', async () => ({
        __typename: 'EmailChangeSent' as const,
        ...(await sendEmailChangeCode(ctx.scope, input.elevatedAccessToken, input.newEmail)),
      })),
    ),

  confirmEmailChange: clientProcedure
    .input(z.object({ elevatedAccessToken: Token, code: Code }))
    .output(
      z.discriminatedUnion('__typename', [
        ElevatedAccess.extend({ __typename: z.literal('EmailChangeConfirmed'), user: ClientUser }),
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
    .mutation(({ ctx, input }) =>
      declared('confirmEmailChange', async () => {
        const { user, ...access } = await confirmEmailChange(ctx.scope, input.elevatedAccessToken, input.code);
        return { __typename: 'EmailChangeConfirmed' as const, user: toClientUser(user), ...access };
      }),
    ),

  createPassword: clientProcedure
    .input(z.object({ elevatedAccessToken: Token, password: Password }))
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('PasswordCreated'), success: z.boolean() }),
        said('ElevatedAccessTokenExpired'),
        said('ElevatedAccessTokenInvalid'),
        z.object({ __typename: z.literal('UserAlreadyHasPassword'), _placeholder: z.boolean() }),
        PasswordPolicyViolation,
      ]),
    )
    .mutation(({ ctx, input }) =>
      declared('createPassword', async () => ({
        __typename: 'PasswordCreated' as const,
        ...(await createOwnPassword(ctx.scope, input.elevatedAccessToken, input.password)),
      })),
    ),

  updatePassword: clientProcedure
    .input(UpdatePasswordInput)
    .output(
      z.discriminatedUnion('__typename', [
        z.object({ __typename: z.literal('PasswordUpdated'), success: z.boolean() }),
        z.object({ __typename: z.literal('IncorrectPassword'), _placeholder: z.boolean() }),
        PasswordPolicyViolation,
      ]),
    )
    .mutation(({ ctx, input }) =>
      declared('updatePassword', async () => ({
        __typename: 'PasswordUpdated' as const,
        ...(await updateOwnPassword(ctx.scope, input.currentPassword, input.newPassword)),
      })),
    ),
};
