import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { emailTaken, userExternalIdTaken as externalIdTaken } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { toOrganizationMembership } from '../organization-memberships/service.ts';
import { membershipsOfUser } from '../organization-memberships/store.ts';
import type { CreateUserInput, ListUsersInput, UpdateUserInput, User } from './schemas.ts';
import {
  deleteUserRow,
  findUser,
  insertUser,
  pageOfUsers,
  type UserChanges,
  type UserRow,
  updateUserRow,
} from './store.ts';

/** The single place that turns a user row into its wire shape. */
export function toUser(row: UserRow): User {
  return {
    object: 'user',
    id: row.id,
    email: row.email,
    email_verified: row.emailVerified,
    first_name: row.firstName,
    last_name: row.lastName,
    profile_picture_url: row.profilePictureUrl,
    last_sign_in_at: null,
    external_id: row.externalId,
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export async function getUser(scope: Scope, id: string): Promise<User> {
  return toUser(await findUser(scope.db, scope.env.id, id));
}

export async function listUsers(scope: Scope, input: z.infer<typeof ListUsersInput>) {
  const filter = { email: input.email, organizationId: input.organization_id };
  return asList(await pageOfUsers(scope.db, scope.env.id, pageParams(input), filter), toUser);
}

export async function createUser(scope: Scope, input: z.infer<typeof CreateUserInput>): Promise<User> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const row = await insertUser(tx, {
      id: newId('user'),
      environmentId: scope.env.id,
      email: input.email,
      emailVerified: input.email_verified ?? false,
      firstName: input.first_name ?? null,
      lastName: input.last_name ?? null,
      externalId: input.external_id ?? null,
      metadata: input.metadata ?? {},
      createdAt: now,
      updatedAt: now,
    });
    const user = toUser(row);
    await recordEvent(tx, scope, 'user.created', user);
    return user;
  });
}

/** Fields absent from the body stay as they are; `null` clears a nullable field. */
export async function updateUser(scope: Scope, input: z.infer<typeof UpdateUserInput>): Promise<User> {
  return scope.db.transaction(async (tx) => {
    const current = await findUser(tx, scope.env.id, input.id, 'update');
    const changes: UserChanges = { updatedAt: scope.now() };
    if (input.email !== undefined) changes.email = input.email;
    if (input.email_verified !== undefined) changes.emailVerified = input.email_verified;
    if (input.first_name !== undefined) changes.firstName = input.first_name;
    if (input.last_name !== undefined) changes.lastName = input.last_name;
    if (input.external_id !== undefined) changes.externalId = input.external_id;
    if (input.metadata !== undefined) {
      // As for organizations: the supplied object replaces the metadata; a null value drops its key.
      const next: Record<string, string> = {};
      for (const [key, value] of Object.entries(input.metadata)) if (value !== null) next[key] = value;
      changes.metadata = next;
    }
    const user = toUser(await updateUserRow(tx, current.id, changes));
    await recordEvent(tx, scope, 'user.updated', user);
    return user;
  });
}

/**
 * Deletes the user. Their memberships (and through those, their group links) go with them by
 * foreign key in the same statement; each membership's deletion is recorded as an event.
 */
export async function deleteUser(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await findUser(tx, scope.env.id, id, 'update');
    const memberships = await membershipsOfUser(tx, scope.env.id, id);
    await deleteUserRow(tx, current.id);
    for (const membership of memberships) {
      await recordEvent(tx, scope, 'organization_membership.deleted', toOrganizationMembership(membership));
    }
    await recordEvent(tx, scope, 'user.deleted', toUser(current));
  });
}
