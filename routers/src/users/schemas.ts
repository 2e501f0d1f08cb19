import { z } from 'zod';
import { Id, ListParams, listOf, Metadata, StrictBoolean } from '../common/schemas.ts';
import { User } from '../user-wire.ts';

/** The user object lives below users/ and organization-memberships/, which both answer it. */
export { User } from '../user-wire.ts';

export const UserList = listOf(User);

const Email = z.string().trim().max(320).pipe(z.email());
const PersonName = z.string().max(256);
const ExternalId = z.string().min(1).max(128);

/** A BCP 47 language tag (`en`, `pt-BR`, `zh-Hant-TW`), as `Intl` accepts it; stored as sent. */
const Locale = z
  .string()
  .min(2)
  .max(35)
  .refine(
    (value) => {
      try {
        return Intl.getCanonicalLocales(value).length === 1;
      } catch {
        return false;
      }
    },
    { message: 'locale must be a BCP 47 language tag such as en or pt-BR' },
  );
const PictureUrl = z
  .string()
  .max(2048)
  .pipe(z.url({ protocol: /^https?$/ }));
/** Upstream's password rules leave the policy to the application; Atrium asks for 8..1024 characters. */
export const PASSWORD_POLICY = { minLength: 8, maxLength: 1024 } as const;
const Password = z.string().min(PASSWORD_POLICY.minLength).max(PASSWORD_POLICY.maxLength);
/** Upstream's `password_hash_type` values (a hash imported from another system). */
export const PASSWORD_HASH_TYPES = ['bcrypt', 'firebase-scrypt', 'ssha', 'scrypt', 'pbkdf2', 'argon2'] as const;

/** The fields create and update share (upstream's user options; the password ones write only). */
const UserFields = {
  email_verified: StrictBoolean.optional(),
  name: z.string().trim().max(513).nullish(),
  first_name: PersonName.nullish(),
  last_name: PersonName.nullish(),
  external_id: ExternalId.nullish(),
  locale: Locale.nullish(),
  profile_picture_url: PictureUrl.nullish(),
  password: Password.optional(),
  password_hash: z.string().min(1).max(1024).optional(),
  password_hash_type: z.enum(PASSWORD_HASH_TYPES).optional(),
};

export const UserIdInput = z.object({ id: Id });

export const UserExternalIdInput = z.object({ external_id: ExternalId });

export const ListUsersInput = ListParams.extend({
  email: z.string().trim().max(320).optional(),
  organization_id: Id.optional(),
});

export const CreateUserInput = z.object({
  email: Email,
  ...UserFields,
  metadata: Metadata.optional(),
});

export const UpdateUserInput = z.object({
  id: Id,
  email: Email.optional(),
  ...UserFields,
  metadata: z
    .record(z.string().min(1).max(40), z.string().max(600).nullable())
    .refine((value) => Object.keys(value).length <= 50, { message: 'metadata may hold at most 50 keys' })
    .optional(),
});
