// What an identity provider writes into a directory (SCIM's users, groups and members), as plain
// fields: the SCIM surface parses the protocol, this file applies the change in one transaction.
import { newId } from '@atrium/db';
import { orNotFound } from '../common/store.ts';
import { ApiError, invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import {
  addDirectoryGroupMembers,
  type DirectoryGroupRow,
  type DirectoryRow,
  type DirectoryUserRow,
  deleteDirectoryGroupRow,
  deleteDirectoryUserRow,
  existingDirectoryUserIds,
  findDirectoryGroup,
  findDirectoryUser,
  insertDirectoryGroup,
  insertDirectoryUser,
  memberIdsOfDirectoryGroup,
  removeDirectoryGroupMembers,
  updateDirectory,
  updateDirectoryGroup,
  updateDirectoryUser,
} from './store.ts';

export interface DirectoryUserFields {
  userName: string;
  externalId: string | null;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  active: boolean;
  /** The SCIM resource as the identity provider sent it (upstream's `raw_attributes`). */
  attributes: Record<string, unknown>;
  customAttributes: Record<string, unknown>;
}

export interface DirectoryGroupFields {
  displayName: string;
  externalId: string | null;
  attributes: Record<string, unknown>;
}

/** The change a write makes to a group's members. */
export type MemberChange = { add: string[]; remove: string[] } | { replace: string[] };

/** A write's precondition: the version the client last read (SCIM `If-Match`), when it sent one. */
export type ExpectedVersion = number | undefined;

/** 412: the resource changed since the version the client names (SCIM's `If-Match`). */
const preconditionFailed = () =>
  new ApiError(412, 'precondition_failed', 'The resource changed since the version named in If-Match.');

function checkVersion(row: { version: number }, expected: ExpectedVersion): void {
  if (expected !== undefined && row.version !== expected) throw preconditionFailed();
}

/** Marks the directory as written to now (and `linked`, the first time). */
async function touchDirectory(tx: Scope['db'], scope: Scope, directory: DirectoryRow): Promise<void> {
  const now = scope.now();
  // At most once a second: every write updating this one row serialized a directory's concurrent writes.
  if (directory.state === 'linked' && now.getTime() - (directory.lastSyncAt?.getTime() ?? 0) < 1_000) return;
  await updateDirectory(tx, scope.env.id, directory.id, {
    lastSyncAt: now,
    ...(directory.state === 'unlinked' ? { state: 'linked', updatedAt: now } : {}),
  });
}

export async function createDirectoryUser(
  scope: Scope,
  directory: DirectoryRow,
  fields: DirectoryUserFields,
): Promise<DirectoryUserRow> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const row = await insertDirectoryUser(tx, {
      id: newId('directoryUser'),
      environmentId: scope.env.id,
      directoryId: directory.id,
      organizationId: directory.organizationId,
      userName: fields.userName,
      externalId: fields.externalId,
      email: fields.email,
      firstName: fields.firstName,
      lastName: fields.lastName,
      state: fields.active ? 'active' : 'inactive',
      attributes: fields.attributes,
      customAttributes: fields.customAttributes,
      createdAt: now,
      updatedAt: now,
    });
    await touchDirectory(tx, scope, directory);
    return row;
  });
}

export async function replaceDirectoryUser(
  scope: Scope,
  directory: DirectoryRow,
  id: string,
  fields: DirectoryUserFields,
  expected?: ExpectedVersion,
): Promise<DirectoryUserRow> {
  return scope.db.transaction(async (tx) => {
    const current = orNotFound(await findDirectoryUser(tx, directory.id, id, 'update'), 'directory_user', id);
    checkVersion(current, expected);
    const row = orNotFound(
      await updateDirectoryUser(tx, directory.id, id, {
        userName: fields.userName,
        externalId: fields.externalId,
        email: fields.email,
        firstName: fields.firstName,
        lastName: fields.lastName,
        state: fields.active ? 'active' : 'inactive',
        attributes: fields.attributes,
        customAttributes: fields.customAttributes,
        updatedAt: scope.now(),
      }),
      'directory_user',
      id,
    );
    await touchDirectory(tx, scope, directory);
    return row;
  });
}

export async function deleteDirectoryUser(
  scope: Scope,
  directory: DirectoryRow,
  id: string,
  expected?: ExpectedVersion,
): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = orNotFound(await findDirectoryUser(tx, directory.id, id, 'update'), 'directory_user', id);
    checkVersion(current, expected);
    await deleteDirectoryUserRow(tx, directory.id, id);
    await touchDirectory(tx, scope, directory);
  });
}

/** Only the directory's own users may be members; an unknown id is the caller's mistake. */
async function requireMembers(tx: Scope['db'], directory: DirectoryRow, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const existing = await existingDirectoryUserIds(tx, directory.id, unique);
  const missing = unique.filter((id) => !existing.has(id));
  if (missing.length > 0) {
    throw invalid(
      [
        {
          field: 'members',
          code: 'member_not_found',
          message: `No user of this directory has the id '${missing[0]}'.`,
        },
      ],
      'invalid_members',
      'A member is not a user of this directory.',
    );
  }
  return unique;
}

async function applyMembers(
  tx: Scope['db'],
  scope: Scope,
  directory: DirectoryRow,
  group: DirectoryGroupRow,
  change: MemberChange,
): Promise<{ added: string[]; removed: string[] }> {
  if ('replace' in change) {
    const wanted = await requireMembers(tx, directory, change.replace);
    const current = await memberIdsOfDirectoryGroup(tx, group.id);
    const wantedSet = new Set(wanted);
    const currentSet = new Set(current);
    const removed = await removeDirectoryGroupMembers(
      tx,
      group.id,
      current.filter((id) => !wantedSet.has(id)),
    );
    const added = await addDirectoryGroupMembers(
      tx,
      scope.env.id,
      group.id,
      wanted.filter((id) => !currentSet.has(id)),
    );
    return { added, removed };
  }
  const add = await requireMembers(tx, directory, change.add);
  const removed = await removeDirectoryGroupMembers(tx, group.id, [...new Set(change.remove)]);
  const added = await addDirectoryGroupMembers(tx, scope.env.id, group.id, add);
  return { added, removed };
}

export async function createDirectoryGroup(
  scope: Scope,
  directory: DirectoryRow,
  fields: DirectoryGroupFields,
  memberIds: string[],
): Promise<DirectoryGroupRow> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const group = await insertDirectoryGroup(tx, {
      id: newId('directoryGroup'),
      environmentId: scope.env.id,
      directoryId: directory.id,
      organizationId: directory.organizationId,
      displayName: fields.displayName,
      externalId: fields.externalId,
      attributes: fields.attributes,
      createdAt: now,
      updatedAt: now,
    });
    await applyMembers(tx, scope, directory, group, { replace: memberIds });
    await touchDirectory(tx, scope, directory);
    return group;
  });
}

/**
 * Replaces a group's attributes and, when `members` is given, its members (PUT), or changes only
 * its members (a PATCH of `members`, `fields` undefined). Concurrent writes to one group serialise
 * on its row.
 */
export async function writeDirectoryGroup(
  scope: Scope,
  directory: DirectoryRow,
  id: string,
  fields: DirectoryGroupFields | undefined,
  members: MemberChange | undefined,
  expected?: ExpectedVersion,
): Promise<DirectoryGroupRow> {
  return scope.db.transaction(async (tx) => {
    const current = orNotFound(await findDirectoryGroup(tx, directory.id, id, 'update'), 'directory_group', id);
    checkVersion(current, expected);
    if (members) await applyMembers(tx, scope, directory, current, members);
    const row = orNotFound(
      await updateDirectoryGroup(tx, directory.id, id, {
        ...(fields
          ? { displayName: fields.displayName, externalId: fields.externalId, attributes: fields.attributes }
          : {}),
        updatedAt: scope.now(),
      }),
      'directory_group',
      id,
    );
    await touchDirectory(tx, scope, directory);
    return row;
  });
}

export async function deleteDirectoryGroup(
  scope: Scope,
  directory: DirectoryRow,
  id: string,
  expected?: ExpectedVersion,
): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = orNotFound(await findDirectoryGroup(tx, directory.id, id, 'update'), 'directory_group', id);
    checkVersion(current, expected);
    await deleteDirectoryGroupRow(tx, directory.id, id);
    await touchDirectory(tx, scope, directory);
  });
}
