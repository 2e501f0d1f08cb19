import { z } from 'zod';
import type { User } from '../../users/schemas.ts';

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
export const UpdateMeInput = z.object({ firstName: ProfileField, lastName: ProfileField, locale: ProfileField });

/** GraphQL's User (WIDGETS-API.md §4) as the typed surfaces answer it; its password facts are asked apart. */
export const ClientUser = z.object({
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
export type ClientUser = z.infer<typeof ClientUser>;

export const toClientUser = (user: User): ClientUser => ({
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
