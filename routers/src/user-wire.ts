// A user's wire shape, below both users/ and organization-memberships/ (a membership embeds its
// user; both folders map users with it).
import type { users } from '@atrium/db';
import { z } from 'zod';
import { Timestamp, wireTime } from './common/schemas.ts';

export type UserRow = typeof users.$inferSelect;

/**
 * The fields of a user its wire shape shows: a row, or one a read decodes from JSON (timestamps
 * then in PostgreSQL's JSON encoding, as `membershipTuple` gives them).
 */
export type UserRecord = Omit<
  UserRow,
  'environmentId' | 'passwordHash' | 'passwordHashType' | 'lastSignInAt' | 'createdAt' | 'updatedAt'
> & {
  lastSignInAt: Date | string | null;
  createdAt: Date | string;
  updatedAt: Date | string;
};

/** Upstream's user object (the fields the WorkOS SDKs read). */
export const User = z
  .object({
    object: z.literal('user'),
    id: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    /** First and last name joined by a space (upstream derives it so), or null when both are. */
    name: z.string().nullable(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    profile_picture_url: z.string().nullable(),
    last_sign_in_at: z.string().nullable(),
    locale: z.string().nullable(),
    external_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;

/** The single place that turns a user row into its wire shape. */
export function toUser(row: UserRecord): User {
  return {
    object: 'user',
    id: row.id,
    email: row.email,
    email_verified: row.emailVerified,
    name: fullName(row.firstName, row.lastName),
    first_name: row.firstName,
    last_name: row.lastName,
    profile_picture_url: row.profilePictureUrl,
    last_sign_in_at: row.lastSignInAt ? wireTime(row.lastSignInAt) : null,
    locale: row.locale,
    external_id: row.externalId,
    metadata: row.metadata,
    created_at: wireTime(row.createdAt),
    updated_at: wireTime(row.updatedAt),
  };
}

/** Upstream's `name`: first and last name joined by a space, null when neither is set. */
export function fullName(first: string | null, last: string | null): string | null {
  return [first, last].filter((part) => part).join(' ') || null;
}
