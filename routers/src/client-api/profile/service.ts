import type { z } from 'zod';
import { ApiError, badRequest, type FieldError, notFound } from '../../kernel/errors.ts';
import { type ClientScope, requireUser } from '../../kernel/principals.ts';
import { membershipStatus } from '../../organization-memberships/store.ts';
import { UpdateUserInput, type User } from '../../users/schemas.ts';
import { getUser, updateUser } from '../../users/service.ts';
import { findUser } from '../../users/store.ts';

/** The caller's own user: UserProfile (`GET /_widgets/UserProfile/me`), GraphQL `me`, `client.me`. */
export function getMe(scope: ClientScope): Promise<User> {
  return getUser(scope, requireUser(scope));
}

/** Whether the caller has a password stored (GraphQL `User.passwordSet`, only on the caller's own user). */
export async function ownPasswordSet(scope: ClientScope): Promise<boolean> {
  const row = await findUser(scope.db, scope.env.id, requireUser(scope));
  return row.passwordHash !== null;
}

/** A user of the token's organization (any membership of it); anyone else is 404, as if absent. */
export async function getOrganizationUser(scope: ClientScope, userId: string): Promise<User> {
  const status = await membershipStatus(scope.db, scope.env.id, scope.client.organizationId, userId);
  if (status === undefined) throw notFound('user', userId);
  return getUser(scope, userId);
}

/** What a profile update sends: absent leaves a field, `""` or null clears it. */
export interface ProfileChanges {
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  locale?: string | null | undefined;
}

/** The API's field names for the profile's (the checks are the users API's own). */
const FIELDS: Record<string, string> = { first_name: 'firstName', last_name: 'lastName', locale: 'locale' };

const cleared = (value: string | null | undefined) => (value === undefined ? undefined : value || null);

/**
 * Updates the caller's names and locale through the users service (its checks, `user.updated`).
 * An invalid BCP 47 locale alone is 400 `invalid_locale` (GraphQL's InvalidLocale); any other
 * invalid field is 400 with the field named. Nothing is stored unless everything is valid.
 */
export async function updateProfile(scope: ClientScope, changes: ProfileChanges): Promise<User> {
  const parsed = UpdateUserInput.safeParse({
    id: requireUser(scope),
    first_name: cleared(changes.firstName),
    last_name: cleared(changes.lastName),
    locale: cleared(changes.locale),
  });
  if (!parsed.success) {
    const errors: FieldError[] = parsed.error.issues.map((issue) => ({
      field: FIELDS[String(issue.path[0])] ?? String(issue.path[0]),
      code: `${FIELDS[String(issue.path[0])] ?? 'field'}_invalid`,
      message: issue.message,
    }));
    const locale = errors.find((e) => e.field === 'locale');
    if (locale && errors.length === 1) throw badRequest('invalid_locale', locale.message);
    throw new ApiError(400, 'invalid_request_parameters', errors.map((e) => e.message).join('; '), errors);
  }
  return updateUser(scope, parsed.data as z.infer<typeof UpdateUserInput>);
}
