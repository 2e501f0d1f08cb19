import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, pageParams } from '../common/schemas.ts';
import { recordEvent, recordEvents } from '../events/record.ts';
import { ApiError, type FieldError, fromDatabaseError, invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { hashPassword, importedHashProblem } from '../lib/password.ts';
import { fullName, toUser, type User } from '../user-wire.ts';
import { userDeleting, usersOfOrganization } from './reactions.ts';
import type { CreateUserInput, ListUsersInput, UpdateUserInput } from './schemas.ts';
import {
  deleteUserRow,
  findUser,
  findUserByExternalId,
  insertUser,
  insertUsersIfAbsent,
  pageOfUsers,
  type UserChanges,
  type UserRow,
  updateUserRow,
  usersWithEmails,
} from './store.ts';

type NameInput = {
  name?: string | null | undefined;
  first_name?: string | null | undefined;
  last_name?: string | null | undefined;
};

/**
 * The first and last name a request sets (undefined: unchanged). `name` alone is split at its
 * first space (`Ada King Lovelace` → `Ada` / `King Lovelace`), so it reads back as sent; sent
 * with `first_name` or `last_name`, it must equal what they make (422 `name_mismatch`).
 */
function namesOf(input: NameInput, current?: { firstName: string | null; lastName: string | null }) {
  let first = input.first_name;
  let last = input.last_name;
  if (input.name !== undefined) {
    if (first === undefined && last === undefined) {
      const name = input.name || null;
      const space = name?.indexOf(' ') ?? -1;
      first = name === null ? null : space < 0 ? name : name.slice(0, space);
      last = name === null || space < 0 ? null : name.slice(space + 1) || null;
    } else {
      const made = fullName(
        first !== undefined ? first : (current?.firstName ?? null),
        last !== undefined ? last : (current?.lastName ?? null),
      );
      if (made !== (input.name || null)) {
        const message = 'name must equal first_name and last_name joined by a space when sent with them.';
        throw invalid([{ field: 'name', code: 'name_mismatch', message }]);
      }
    }
  }
  return { first, last };
}

type PasswordInput = {
  password?: string | undefined;
  password_hash?: string | undefined;
  password_hash_type?: string | undefined;
};

/**
 * The password a request sets, as the hash to store (undefined: unchanged). `password` is
 * hashed with scrypt (lib/password.ts); `password_hash` with its `password_hash_type` is an
 * imported hash, stored as given once its format and cost are checked (else 422
 * `invalid_password_hash`). Neither is ever returned.
 */
async function passwordOf(
  environmentId: string,
  input: PasswordInput,
): Promise<{ hash: string; type: string } | undefined> {
  const errors: FieldError[] = [];
  if (input.password !== undefined && input.password_hash !== undefined) {
    const message = 'Send either password or password_hash, not both.';
    errors.push({ field: 'password_hash', code: 'password_conflict', message });
  }
  if ((input.password_hash === undefined) !== (input.password_hash_type === undefined)) {
    const message = 'password_hash and password_hash_type go together.';
    errors.push({ field: 'password_hash_type', code: 'password_hash_type_required', message });
  }
  if (errors.length > 0) throw invalid(errors);
  if (input.password !== undefined) return { hash: await hashPassword(environmentId, input.password), type: 'scrypt' };
  if (input.password_hash !== undefined && input.password_hash_type !== undefined) {
    // Its cost is bounded here: every later check of this user's password pays it.
    const problem = importedHashProblem(input.password_hash_type, input.password_hash);
    if (problem) throw invalid([{ field: 'password_hash', code: 'invalid_password_hash', message: problem }]);
    return { hash: input.password_hash, type: input.password_hash_type };
  }
  return undefined;
}

export async function getUser(scope: Scope, id: string): Promise<User> {
  return toUser(await findUser(scope.db, scope.env.id, id));
}

/** `GET /user_management/users/external_id/:external_id` (the SDK's `getUserByExternalId`). */
export async function getUserByExternalId(scope: Scope, externalId: string): Promise<User> {
  return toUser(await findUserByExternalId(scope.db, scope.env.id, externalId));
}

export async function listUsers(scope: Scope, input: z.infer<typeof ListUsersInput>) {
  const { organization_id: organizationId } = input;
  const ids = organizationId ? usersOfOrganization(scope.db, scope.env.id, organizationId) : undefined;
  const filter = { email: input.email, ids };
  return asList(await pageOfUsers(scope.db, scope.env.id, pageParams(input), filter), toUser);
}

export async function createUser(scope: Scope, input: z.infer<typeof CreateUserInput>): Promise<User> {
  const names = namesOf(input);
  const password = await passwordOf(scope.env.id, input);
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const row = await insertUser(tx, {
      id: newId('user'),
      environmentId: scope.env.id,
      email: input.email,
      emailVerified: input.email_verified ?? false,
      firstName: names.first ?? null,
      lastName: names.last ?? null,
      locale: input.locale ?? null,
      profilePictureUrl: input.profile_picture_url ?? null,
      externalId: input.external_id ?? null,
      metadata: input.metadata ?? {},
      passwordHash: password?.hash ?? null,
      passwordHashType: password?.type ?? null,
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
  const password = await passwordOf(scope.env.id, input);
  return scope.db.transaction(async (tx) => {
    const current = await findUser(tx, scope.env.id, input.id, 'update');
    const names = namesOf(input, current);
    const changes: UserChanges = { updatedAt: scope.now() };
    if (input.email !== undefined) changes.email = input.email;
    if (input.email_verified !== undefined) changes.emailVerified = input.email_verified;
    if (names.first !== undefined) changes.firstName = names.first;
    if (names.last !== undefined) changes.lastName = names.last;
    if (input.locale !== undefined) changes.locale = input.locale;
    if (input.profile_picture_url !== undefined) changes.profilePictureUrl = input.profile_picture_url;
    if (input.external_id !== undefined) changes.externalId = input.external_id;
    if (password) {
      changes.passwordHash = password.hash;
      changes.passwordHashType = password.type;
    }
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
 * foreign key in the same statement; the reactions registered in app-router.ts run first (their
 * API keys revoked, each membership's deletion recorded as an event).
 */
export async function deleteUser(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await findUser(tx, scope.env.id, id, 'update');
    await userDeleting(tx, scope, current.id);
    await deleteUserRow(tx, current.id);
    await recordEvent(tx, scope, 'user.deleted', toUser(current));
  });
}

/** A person a directory provisions: an e-mail (checked by the caller) and the names for a new user. */
export interface ProvisionedPerson {
  email: string;
  firstName: string | null;
  lastName: string | null;
}

/**
 * The users of these people, in the caller's transaction (directory provisioning): an existing
 * user of the environment with the e-mail, compared case-insensitively, is answered as it is and
 * never duplicated; a missing one is created with the names given (`user.created`). Keyed by the
 * lower-cased e-mail; `created` tells a user made here from one that existed.
 */
export async function provisionUsers(
  tx: Db,
  scope: Scope,
  people: ProvisionedPerson[],
): Promise<Map<string, { user: UserRow; created: boolean }>> {
  const wanted = new Map<string, ProvisionedPerson>();
  for (const person of people) {
    const key = person.email.toLowerCase();
    if (!wanted.has(key)) wanted.set(key, person);
  }
  // Insert first (most provisioned people are new: one statement), then read the e-mails the
  // environment held already, or a concurrent transaction inserted first (the insert waited for it).
  const now = scope.now();
  const inserted = await insertUsersIfAbsent(
    tx,
    scope.env.id,
    [...wanted.values()].map((person) => ({
      id: newId('user'),
      email: person.email,
      firstName: person.firstName,
      lastName: person.lastName,
    })),
    now,
  );
  const found = new Map<string, { user: UserRow; created: boolean }>();
  for (const user of inserted) found.set(user.email.toLowerCase(), { user, created: true });
  const held = [...wanted.keys()].filter((key) => !found.has(key));
  for (const user of await usersWithEmails(tx, scope.env.id, held)) {
    found.set(user.email.toLowerCase(), { user, created: false });
  }
  await recordEvents(
    tx,
    scope,
    inserted.map((user) => ({ event: 'user.created', data: toUser(user) })),
  );
  return found;
}

/** What an identity provider changed of a provisioned person: each field present changed (null: removed). */
export interface DirectoryPersonChange {
  /** The new e-mail, already checked usable (provisioning.ts), or undefined when it did not change. */
  email?: string | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
}

/**
 * A provisioned user follows its directory user (directory sync, issue #36), in the caller's
 * transaction: the names the identity provider changed, and its new e-mail unless another user of
 * the environment has it (then the user keeps its e-mail, and the log says why: two people of one
 * environment never share an e-mail, and the other may not be the directory's). `user.updated`
 * when anything changed. `context` names the directory user in the log line.
 */
export async function followDirectoryPerson(
  tx: Db,
  scope: Scope,
  userId: string,
  change: DirectoryPersonChange,
  context: { directoryUserId: string },
): Promise<void> {
  const current = await findUser(tx, scope.env.id, userId, 'update');
  const changes: UserChanges = {};
  if (change.firstName !== undefined && change.firstName !== current.firstName) changes.firstName = change.firstName;
  if (change.lastName !== undefined && change.lastName !== current.lastName) changes.lastName = change.lastName;
  let email = change.email;
  if (email !== undefined && email.toLowerCase() === current.email.toLowerCase()) email = undefined;
  if (email !== undefined) {
    const holders = await usersWithEmails(tx, scope.env.id, [email.toLowerCase()]);
    if (holders.some((user) => user.id !== userId)) {
      keptEmail(scope, userId, context);
      email = undefined;
    }
  }
  if (email === undefined && Object.keys(changes).length === 0) return;
  changes.updatedAt = scope.now();
  let row: UserRow | undefined;
  if (email !== undefined) {
    const withEmail: UserChanges = { ...changes, email };
    try {
      // A savepoint: a user created with the e-mail since the check leaves the transaction usable.
      row = await tx.transaction((sp) => updateUserRow(sp as unknown as Db, userId, withEmail));
    } catch (error) {
      const taken = error instanceof ApiError ? error : fromDatabaseError(error);
      if (taken?.apiCode !== 'email_not_available') throw error;
      keptEmail(scope, userId, context);
      if (Object.keys(changes).length === 1) return;
    }
  }
  row ??= await updateUserRow(tx, userId, changes);
  await recordEvent(tx, scope, 'user.updated', toUser(row));
}

function keptEmail(scope: Scope, userId: string, context: { directoryUserId: string }): void {
  scope.deps.log.warn(
    { userId, directoryUserId: context.directoryUserId, environmentId: scope.env.id },
    'directory sync: the e-mail of a provisioned user was not changed: another user of the environment has it',
  );
}
