// What an identity provider writes into a directory (SCIM's users, groups and members), as plain
// fields: the SCIM surface parses the protocol, this file applies the change in one transaction.
import { coalesced, newId } from '@atrium/db';
import { orNotFound } from '../common/store.ts';
import {
  type EventPlace,
  type EventToRecord,
  eventPlace,
  recordEvent,
  recordEvents,
  withEventsBatched,
} from '../events/record.ts';
import { forgetLocally } from '../invalidation/service.ts';
import { ApiError, invalid, isTransactionConflict, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { verifiedDomainsOfOrganization } from '../organization-domains/store.ts';
import { type DirectoryPersonChange, followDirectoryPerson } from '../users/service.ts';
import {
  type DirectoryUserLinks,
  deprovisionUsers,
  linkDirectoryUsers,
  provisionableEmail,
  provisionDirectoryUsers,
  provisionLinkedMemberships,
  syncDirectoryRoles,
} from './provisioning.ts';
import { drawDirectoryPlace, freeDirectoryPlace, takeDirectoryPlace } from './quota.ts';
import { toDirectoryEvent, toDirectoryGroup, toDirectoryUser } from './service.ts';
import {
  addDirectoryGroupMembers,
  type DirectoryGroupRow,
  type DirectoryRow,
  type DirectoryUserRow,
  deleteDirectoryGroupRow,
  deleteDirectoryUserRow,
  directoryUsersWithIds,
  existingDirectoryUserIds,
  findDirectoryGroup,
  findDirectoryUser,
  insertDirectoryGroup,
  insertDirectoryUsers,
  linkDirectory,
  memberIdsOfDirectoryGroup,
  noteDirectorySync,
  provisionedUsersOfGroup,
  removeDirectoryGroupMembers,
  roleSlugsOfDirectoryUsers,
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

/**
 * The directory a SCIM write goes to, as its token's lookup read it (auth/directory-token.ts):
 * enough to write to it, so a write reads the directory row no more.
 */
export type DirectoryRef = Pick<DirectoryRow, 'id' | 'organizationId' | 'state'>;

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

/** `last_sync_at` moves at most once a second: concurrent writes of a bulk sync need not all update the row. */
const SYNC_RESOLUTION_MS = 1_000;

/**
 * When this process last committed a directory's `last_sync_at` (by environment and directory):
 * a write within SYNC_RESOLUTION_MS of it skips the statement, which would change nothing (the
 * column is at most that old). Set only after the commit, so a write rolled back never stops the
 * next one from marking. Bounded: emptied past MAX_NOTED directories.
 */
const notedSyncs = new Map<string, number>();
const MAX_NOTED = 10_000;

/**
 * Marks the directory as written to now (unless this process did within the resolution). Its first
 * SCIM write links it (`unlinked` to `linked`) and records `dsync.activated` at `activation`, once
 * however many first writes race. Answers the time it stored, if it stored one.
 */
async function touchDirectory(
  tx: Scope['db'],
  scope: Scope,
  directory: DirectoryRef,
  key: string,
  activation: EventPlace | undefined,
): Promise<number | undefined> {
  const now = scope.now();
  if (activation) {
    const linked = await linkDirectory(tx, scope.env.id, directory.id, now);
    if (linked) {
      const domains = await verifiedDomainsOfOrganization(tx, linked.organizationId);
      await recordEvent(tx, scope, 'dsync.activated', toDirectoryEvent(linked, domains), null, activation);
      return now.getTime();
    }
  }
  const noted = notedSyncs.get(key);
  const elapsed = noted === undefined ? Number.POSITIVE_INFINITY : now.getTime() - noted;
  if (elapsed >= 0 && elapsed < SYNC_RESOLUTION_MS) return undefined;
  return (await noteDirectorySync(tx, scope.env.id, directory.id, now, SYNC_RESOLUTION_MS)) ? now.getTime() : undefined;
}

/**
 * One SCIM write of the directory: refused (404) once the directory is being deleted (its token no
 * longer authenticates either), else `fn` in one transaction whose events are written in one
 * statement at its end (most writes record several), the directory then marked as written to.
 */
async function directoryWrite<T>(
  scope: Scope,
  directory: DirectoryRef,
  fn: (tx: Scope['db']) => Promise<T>,
): Promise<T> {
  if (directory.state === 'deleting') throw notFound('directory', directory.id);
  const key = `${scope.env.id}:${directory.id}`;
  let noted: number | undefined;
  const result = await scope.db.transaction((tx) =>
    withEventsBatched(tx, async () => {
      // A first write's `dsync.activated` comes before the write's own events, though the
      // directory is linked after them (its row locked last, as by every write: no deadlock).
      const activation = directory.state === 'unlinked' ? eventPlace(scope) : undefined;
      const result = await fn(tx);
      noted = await touchDirectory(tx, scope, directory, key, activation);
      return result;
    }),
  );
  if (noted !== undefined) {
    if (notedSyncs.size >= MAX_NOTED) notedSyncs.clear();
    notedSyncs.set(key, noted);
  }
  // Committed, it is linked (by this write or another): the token's cached state is not, so it goes.
  if (directory.state === 'unlinked') forgetLocally(scope.deps, 'directory', directory.id);
  return result;
}

/** How a write finds the row it changes: its finder (locking it) and its name in a 404. */
interface Target<R> {
  find: (tx: Scope['db'], directoryId: string, id: string, lock: 'update') => Promise<R | undefined>;
  what: 'directory_user' | 'directory_group';
}

const USER: Target<DirectoryUserRow> = { find: findDirectoryUser, what: 'directory_user' };
const GROUP: Target<DirectoryGroupRow> = { find: findDirectoryGroup, what: 'directory_group' };

/**
 * A write of one existing user or group (`directoryWrite`): its row locked first (404 when it is
 * not the directory's; 412 when it changed since the version `If-Match` names), then `fn`.
 */
function lockedWrite<R extends { version: number }, T>(
  scope: Scope,
  directory: DirectoryRef,
  target: Target<R>,
  id: string,
  expected: ExpectedVersion,
  fn: (tx: Scope['db'], current: R) => Promise<T>,
): Promise<T> {
  return directoryWrite(scope, directory, async (tx) => {
    const current = orNotFound(await target.find(tx, directory.id, id, 'update'), target.what, id);
    checkVersion(current, expected);
    return fn(tx, current);
  });
}

/**
 * A directory user as upstream's `dsync.user.*` events carry it: the `DirectoryUser`, without
 * `groups`, with `role` (the first by slug) and `roles` when groups of the directory that map to
 * roles hold it (absent, never null, when none do).
 */
function userEventData(row: DirectoryUserRow, roleSlugs: string[] = []): Record<string, unknown> {
  const { groups: _groups, ...user } = toDirectoryUser(
    row,
    [],
    roleSlugs.map((slug) => ({ slug })),
  );
  return user;
}

/** Upstream's `previous_attributes`: the previous value of each top-level raw attribute that changed (null: absent). */
export function previousAttributes(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key] ?? null;
  }
  return previous;
}

/**
 * How many more times a lone create runs when PostgreSQL aborts its transaction for a concurrent
 * one (a deadlock with a batch creating the same userName or e-mail, or a serialization failure).
 */
const CONFLICT_RETRIES = 2;

/**
 * Runs `write` (a whole transaction) again, up to CONFLICT_RETRIES times, while it loses a deadlock
 * or a serialization failure: its caller then sees its own outcome (201, or 409 `uniqueness` when
 * the concurrent write took the userName), not "retry it", which Okta does not do.
 */
async function againOnConflict<T>(write: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await write();
    } catch (error) {
      if (tries >= CONFLICT_RETRIES || !isTransactionConflict(error)) throw error;
    }
  }
}

/** A SCIM create as the group commit carries it (`createUsersTogether`). */
interface UserCreate {
  scope: Scope;
  directory: DirectoryRef;
  fields: DirectoryUserFields;
}

/**
 * Concurrent creates of one directory go together (group commit, `coalesced`, keyed by the
 * directory): one arriving alone is its own transaction, as it always was; those arriving while
 * one is in flight go as one transaction for all, in the statements one create costs (the writes
 * below are list-shaped). A batch with any refusal (409 `uniqueness`, 403 quota, a shard without
 * room for all, a deadlock with a lone create) rolls back and its creates run again one by one, so
 * each caller gets its own outcome; one alone that loses a deadlock runs again (`againOnConflict`).
 */
const createUsersTogether = coalesced<UserCreate, DirectoryUserRow>({
  // The batch runs in its first caller's scope: only creates alike in all their events carry go together.
  key: ({ scope, directory }) =>
    JSON.stringify([scope.env.id, directory.id, scope.actor ?? null, scope.reason ?? null]),
  async one(_db, { scope, directory, fields }) {
    const [row] = await againOnConflict(() =>
      directoryWrite(scope, directory, (tx) => insertNewUsers(tx, scope, directory, [fields])),
    );
    return row as DirectoryUserRow;
  },
  many(_db, creates) {
    const { scope, directory } = creates[0] as UserCreate;
    // Linked by the batch if any of its callers saw the directory unlinked (touchDirectory).
    const ref = creates.some((c) => c.directory.state === 'unlinked')
      ? { ...directory, state: 'unlinked' as const }
      : directory;
    return directoryWrite(scope, ref, (tx) =>
      insertNewUsers(
        tx,
        scope,
        ref,
        creates.map((c) => c.fields),
      ),
    );
  },
  max: 100,
});

/**
 * SCIM `POST /Users`: the directory user (`dsync.user.created`); an active one with a usable
 * e-mail is provisioned first (provisioning.ts), so the row is written once, linked. A userName
 * or externalId taken already (409), or the directory's quota reached (403), rolls everything back.
 * Concurrent creates of one directory share a transaction (`createUsersTogether`).
 */
export async function createDirectoryUser(
  scope: Scope,
  directory: DirectoryRef,
  fields: DirectoryUserFields,
): Promise<DirectoryUserRow> {
  if (directory.state === 'deleting') throw notFound('directory', directory.id);
  return createUsersTogether(scope.db, { scope, directory, fields });
}

/** New directory users of one directory in the caller's transaction, in its order: `createDirectoryUser`'s write. */
async function insertNewUsers(
  tx: Scope['db'],
  scope: Scope,
  directory: DirectoryRef,
  list: DirectoryUserFields[],
): Promise<DirectoryUserRow[]> {
  const ids = list.map(() => newId('directoryUser'));
  const targets = list.flatMap((fields, i) =>
    fields.active
      ? [
          {
            directoryUserId: ids[i] as string,
            userId: null,
            email: fields.email,
            firstName: fields.firstName,
            lastName: fields.lastName,
          },
        ]
      : [],
  );
  const links: DirectoryUserLinks =
    targets.length > 0 ? await linkDirectoryUsers(tx, scope, targets) : { linked: new Map(), fresh: new Map() };
  const { linked } = links;
  const now = scope.now();
  // The quota's places in the insert's own statement, drawn last as they were: its shard's row
  // stays locked until the commit, so it is held through the events only. A shard full or not
  // made yet takes the places apart; refused, everything rolls back all the same.
  const place = drawDirectoryPlace(scope, 'users');
  // The memberships and the directory users' insert need only the users' ids, not each other:
  // sent together, pipelined on the transaction's connection (one round trip where two were).
  const [, { rows, placed }] = await Promise.all([
    provisionLinkedMemberships(tx, scope, directory.organizationId, links, false),
    insertDirectoryUsers(
      tx,
      list.map((fields, i) => {
        const id = ids[i] as string;
        return {
          id,
          environmentId: scope.env.id,
          directoryId: directory.id,
          organizationId: directory.organizationId,
          ...storedUserFields(fields),
          userId: linked.get(id) ?? null,
          createdAt: now,
          updatedAt: now,
        };
      }),
      place,
    ),
  ]);
  if (!placed) await takeDirectoryPlace(tx, scope, directory, 'users', place, rows.length);
  await recordEvents(
    tx,
    scope,
    rows.map((row) => ({ event: 'dsync.user.created', data: userEventData(row) })),
  );
  return rows;
}

/** The columns a SCIM user's fields set, on create and on replace alike. */
function storedUserFields(fields: DirectoryUserFields) {
  return {
    userName: fields.userName,
    externalId: fields.externalId,
    email: fields.email,
    firstName: fields.firstName,
    lastName: fields.lastName,
    state: fields.active ? ('active' as const) : ('inactive' as const),
    attributes: fields.attributes,
    customAttributes: fields.customAttributes,
  };
}

/**
 * SCIM `PUT /Users/{id}` (and a PATCH, applied by the SCIM surface to the whole resource).
 * Active: provisioned (again), so a reactivated user is an active member with its groups' roles;
 * inactive (`active: false`, Okta's deprovisioning): its membership is deactivated and its sessions
 * in the organization end. `dsync.user.updated` with `previous_attributes` when anything changed.
 */
export async function replaceDirectoryUser(
  scope: Scope,
  directory: DirectoryRef,
  id: string,
  fields: DirectoryUserFields,
  expected?: ExpectedVersion,
): Promise<DirectoryUserRow> {
  return lockedWrite(scope, directory, USER, id, expected, async (tx, current) => {
    let userId = current.userId;
    if (fields.active) {
      const linked = await provisionDirectoryUsers(
        tx,
        scope,
        directory.organizationId,
        [{ directoryUserId: id, userId, email: fields.email, firstName: fields.firstName, lastName: fields.lastName }],
        true,
      );
      userId = linked.get(id) ?? null;
    }
    const row = orNotFound(
      await updateDirectoryUser(tx, directory.id, id, {
        ...storedUserFields(fields),
        userId,
        updatedAt: scope.now(),
      }),
      'directory_user',
      id,
    );
    if (current.userId && userId === current.userId) {
      await followIdentityProvider(tx, scope, current, current.userId, fields);
    }
    if (!fields.active && current.userId) {
      await deprovisionUsers(tx, scope, directory.organizationId, [current.userId]);
    }
    const previous = previousAttributes(current.attributes, row.attributes);
    if (Object.keys(previous).length > 0 || current.state !== row.state) {
      const roleSlugs = await roleSlugsOfDirectoryUsers(tx, [id]);
      await recordEvent(tx, scope, 'dsync.user.updated', {
        ...userEventData(row, roleSlugs.get(id)),
        previous_attributes: previous,
      });
    }
    return row;
  });
}

/**
 * The Atrium user a directory user provisioned follows what the identity provider changed of its
 * names and e-mail (not what it left as it was: a name an administrator edited in Atrium stays
 * until the identity provider changes it). An e-mail that is not one a user may have is not taken.
 */
async function followIdentityProvider(
  tx: Scope['db'],
  scope: Scope,
  current: DirectoryUserRow,
  userId: string,
  fields: DirectoryUserFields,
): Promise<void> {
  const change: DirectoryPersonChange = {};
  if (fields.firstName !== current.firstName) change.firstName = fields.firstName;
  if (fields.lastName !== current.lastName) change.lastName = fields.lastName;
  const email = provisionableEmail(fields.email);
  if (email !== null && fields.email !== current.email) change.email = email;
  if (Object.keys(change).length === 0) return;
  await followDirectoryPerson(tx, scope, userId, change, { directoryUserId: current.id });
}

/**
 * SCIM `DELETE /Users/{id}`: the directory user goes (`dsync.user.deleted`, as it was), its group
 * memberships with it; its membership is deactivated and its sessions in the organization end.
 * The Atrium user stays: it may belong to other organizations.
 */
export async function deleteDirectoryUser(
  scope: Scope,
  directory: DirectoryRef,
  id: string,
  expected?: ExpectedVersion,
): Promise<void> {
  await lockedWrite(scope, directory, USER, id, expected, async (tx, current) => {
    const roleSlugs = await roleSlugsOfDirectoryUsers(tx, [id]);
    await deleteDirectoryUserRow(tx, directory.id, id);
    await freeDirectoryPlace(tx, directory, 'users');
    if (current.userId) await deprovisionUsers(tx, scope, directory.organizationId, [current.userId]);
    await recordEvent(tx, scope, 'dsync.user.deleted', userEventData(current, roleSlugs.get(id)));
  });
}

/** Only the directory's own users may be members; an unknown id is the caller's mistake. */
async function requireMembers(tx: Scope['db'], directory: DirectoryRef, ids: string[]): Promise<string[]> {
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
  directory: DirectoryRef,
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

/**
 * Records `dsync.group.user_added` / `user_removed` for each member changed (`{directory_id, user,
 * group}`, the group as it is now), in two statements however many; when the group maps to a role,
 * the changed users' roles follow (a user who left their last mapped group falls back to the
 * default role).
 */
async function membersChanged(
  tx: Scope['db'],
  scope: Scope,
  directory: DirectoryRef,
  group: DirectoryGroupRow,
  change: { added: string[]; removed: string[] },
  removedRows: DirectoryUserRow[],
): Promise<void> {
  if (change.added.length === 0 && change.removed.length === 0) return;
  const groupData = toDirectoryGroup(group);
  const addedRows = await directoryUsersWithIds(tx, directory.id, change.added);
  // Their roles as the change leaves them (a user removed from a mapped group loses its role).
  const roleSlugs = await roleSlugsOfDirectoryUsers(tx, [...change.added, ...change.removed]);
  const events: EventToRecord[] = [
    ...addedRows.map((row) => ({
      event: 'dsync.group.user_added',
      data: { directory_id: directory.id, user: userEventData(row, roleSlugs.get(row.id)), group: groupData },
      organizationId: directory.organizationId,
    })),
    ...removedRows.map((row) => ({
      event: 'dsync.group.user_removed',
      data: { directory_id: directory.id, user: userEventData(row, roleSlugs.get(row.id)), group: groupData },
      organizationId: directory.organizationId,
    })),
  ];
  await recordEvents(tx, scope, events);
  if (group.roleId === null) return;
  const users = [...addedRows, ...removedRows].flatMap((row) => (row.userId ? [row.userId] : []));
  await syncDirectoryRoles(tx, scope, directory.organizationId, users, true);
}

/** SCIM `POST /Groups`: the group (`dsync.group.created`) and its members (`dsync.group.user_added` each). */
export async function createDirectoryGroup(
  scope: Scope,
  directory: DirectoryRef,
  fields: DirectoryGroupFields,
  memberIds: string[],
): Promise<DirectoryGroupRow> {
  return directoryWrite(scope, directory, async (tx) => {
    await takeDirectoryPlace(tx, scope, directory, 'groups');
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
    const change = await applyMembers(tx, scope, directory, group, { replace: memberIds });
    await recordEvent(tx, scope, 'dsync.group.created', toDirectoryGroup(group));
    await membersChanged(tx, scope, directory, group, change, []);
    return group;
  });
}

/**
 * Replaces a group's attributes and, when `members` is given, its members (PUT), or changes only
 * its members (a PATCH of `members`, `fields` undefined). Concurrent writes to one group serialise
 * on its row. `dsync.group.updated` (with `previous_attributes`) when its attributes changed, and
 * one `dsync.group.user_added` / `user_removed` per member changed.
 */
export async function writeDirectoryGroup(
  scope: Scope,
  directory: DirectoryRef,
  id: string,
  fields: DirectoryGroupFields | undefined,
  members: MemberChange | undefined,
  expected?: ExpectedVersion,
): Promise<DirectoryGroupRow> {
  return lockedWrite(scope, directory, GROUP, id, expected, async (tx, current) => {
    const removing = members ? await membersLeaving(tx, directory, current, members) : [];
    const change = members ? await applyMembers(tx, scope, directory, current, members) : { added: [], removed: [] };
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
    const previous = fields ? previousAttributes(current.attributes, row.attributes) : {};
    if (Object.keys(previous).length > 0) {
      await recordEvent(tx, scope, 'dsync.group.updated', { ...toDirectoryGroup(row), previous_attributes: previous });
    }
    const removedIds = new Set(change.removed);
    const removedRows = removing.filter((user) => removedIds.has(user.id));
    await membersChanged(tx, scope, directory, row, change, removedRows);
    return row;
  });
}

/** The rows of the members a change may remove (read before they go, for their events). */
async function membersLeaving(
  tx: Scope['db'],
  directory: DirectoryRef,
  group: DirectoryGroupRow,
  change: MemberChange,
): Promise<DirectoryUserRow[]> {
  if ('replace' in change) {
    const wanted = new Set(change.replace);
    const current = await memberIdsOfDirectoryGroup(tx, group.id);
    return directoryUsersWithIds(
      tx,
      directory.id,
      current.filter((id) => !wanted.has(id)),
    );
  }
  return directoryUsersWithIds(tx, directory.id, [...new Set(change.remove)]);
}

/**
 * SCIM `DELETE /Groups/{id}`: the group goes (`dsync.group.deleted`, as it was), its member links
 * with it; when it mapped to a role, its members' roles follow.
 */
export async function deleteDirectoryGroup(
  scope: Scope,
  directory: DirectoryRef,
  id: string,
  expected?: ExpectedVersion,
): Promise<void> {
  await lockedWrite(scope, directory, GROUP, id, expected, async (tx, current) => {
    const users = current.roleId === null ? [] : await provisionedUsersOfGroup(tx, current.id);
    await deleteDirectoryGroupRow(tx, directory.id, id);
    await freeDirectoryPlace(tx, directory, 'groups');
    await syncDirectoryRoles(tx, scope, directory.organizationId, users, true);
    await recordEvent(tx, scope, 'dsync.group.deleted', toDirectoryGroup(current));
  });
}
