import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { Code, ElevatedAccess, NewEmail, Password, UpdatePasswordInput } from '../account/schemas.ts';
import {
  authenticationInformation,
  confirmEmailChange,
  createOwnPassword,
  sendEmailChangeCode,
  sendIdentityCode,
  updateOwnPassword,
  verifyIdentityCode,
} from '../account/service.ts';
import { Me, toMe } from '../profile/schemas.ts';

// UserProfile's "Edit email" and UserSecurity's "Change password"; refusals are the services'
// ApiErrors, answered as statuses. Elevated access comes as `x-elevated-access-token`.

const route = (method: 'GET' | 'POST', path: string, summary: string) => ({
  openapi: { method, path: `/_widgets/UserProfile/${path}` as const, tags: ['Widgets'], summary },
});

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

/** WIDGETS-API.md section 2.1, after row 20. */
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
      const sent = await sendIdentityCode(ctx.scope);
      return { authenticationChallenge: sent.authenticationChallengeId, type: 'EmailVerification' as const };
    }),

  verify: clientProcedure
    .meta(route('POST', 'verify', 'Check the code; a right one grants elevated access'))
    .input(z.object({ code: Code, authenticationChallengeId: Id }))
    .output(ElevatedAccess)
    .mutation(({ ctx, input }) => verifyIdentityCode(ctx.scope, input.authenticationChallengeId, input.code)),

  sendEmailChange: clientProcedure
    .meta(route('POST', 'send-email-change', 'Mail a code to the new e-mail address (elevated access)'))
    .input(z.object({ newEmail: NewEmail }))
    .output(z.object({ expiresAt: z.string() }))
    .mutation(({ ctx, input }) => sendEmailChangeCode(ctx.scope, ctx.elevatedAccess, input.newEmail)),

  verifyEmailChange: clientProcedure
    .meta(route('POST', 'verify-email-change', "Check the new address's code and change to it (elevated access)"))
    .input(z.object({ code: Code }))
    .output(ElevatedAccess.extend({ user: Me }))
    .mutation(async ({ ctx, input }) => {
      const { user, ...access } = await confirmEmailChange(ctx.scope, ctx.elevatedAccess, input.code);
      return { user: toMe(user), ...access };
    }),

  createPassword: clientProcedure
    .meta({ ...route('POST', 'create-password', 'Set a first password (elevated access)'), successStatus: 201 })
    .input(z.object({ password: Password }))
    .output(z.object({ success: z.boolean() }))
    .mutation(({ ctx, input }) => createOwnPassword(ctx.scope, ctx.elevatedAccess, input.password)),

  // The UserSecurity widget's "Change password".
  updatePassword: clientProcedure
    .meta({ ...route('POST', 'update-password', "Change the caller's password"), successStatus: 201 })
    .input(UpdatePasswordInput)
    .output(z.object({ success: z.boolean() }))
    .mutation(({ ctx, input }) => updateOwnPassword(ctx.scope, input.currentPassword, input.newPassword)),
};
