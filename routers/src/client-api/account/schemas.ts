import { z } from 'zod';

/** A mailed code as typed (six digits; anything else is simply not right). */
export const Code = z.string().max(64);
export const Token = z.string().max(256);
export const NewEmail = z.string().max(1024);
export const Password = z.string().max(4096);

/** A password change by the signed-in user (the UserSecurity widget and `client.account.updatePassword`). */
export const UpdatePasswordInput = z.object({ currentPassword: Password, newPassword: Password });

export const ElevatedAccess = z.object({ elevatedAccessToken: z.string(), expiresAt: z.string() });

/** A password's violation of the policy, as the typed surfaces show it (GraphQL `PasswordViolation`). */
export const PasswordViolation = z.object({
  code: z.string(),
  message: z.string(),
  minimumLength: z.number().nullable(),
  maximumLength: z.number().nullable(),
  strengthSuggestions: z.array(z.string()),
});
export type PasswordViolation = z.infer<typeof PasswordViolation>;
