import { z } from 'zod';
import { Id, ListParams, listOf, Metadata, StrictBoolean, Timestamp } from '../common/schemas.ts';

/** Upstream's user object (the fields the WorkOS SDKs read). */
export const User = z
  .object({
    object: z.literal('user'),
    id: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    profile_picture_url: z.string().nullable(),
    last_sign_in_at: z.string().nullable(),
    external_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;

export const UserList = listOf(User);

const Email = z.string().trim().max(320).pipe(z.email());
const PersonName = z.string().max(256);
const ExternalId = z.string().min(1).max(128);

export const UserIdInput = z.object({ id: Id });

export const ListUsersInput = ListParams.extend({
  email: z.string().trim().max(320).optional(),
  organization_id: Id.optional(),
});

export const CreateUserInput = z.object({
  email: Email,
  email_verified: StrictBoolean.optional(),
  first_name: PersonName.nullish(),
  last_name: PersonName.nullish(),
  external_id: ExternalId.nullish(),
  metadata: Metadata.optional(),
});

export const UpdateUserInput = z.object({
  id: Id,
  email: Email.optional(),
  email_verified: StrictBoolean.optional(),
  first_name: PersonName.nullish(),
  last_name: PersonName.nullish(),
  external_id: ExternalId.nullish(),
  metadata: z
    .record(z.string().min(1).max(40), z.string().max(600).nullable())
    .refine((value) => Object.keys(value).length <= 50, { message: 'metadata may hold at most 50 keys' })
    .optional(),
});
