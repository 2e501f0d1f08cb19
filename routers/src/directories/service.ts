// Directories (issue #36): an organization's SCIM directory, its users and groups, as upstream's
// directory-sync API shows them. The SCIM surface (rest-facade's SCIM codec) parses the protocol
// and calls the write functions below with plain fields; this file knows nothing of SCIM.
import { type Db, type DirectoryType, newId } from '@atrium/db';
import type { z } from 'zod';
import { iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent, withEventsBatched } from '../events/record.ts';
import { forgetLocally, publishInvalidation } from '../invalidation/service.ts';
import type { Deps } from '../kernel/deps.ts';
import { invalid } from '../kernel/errors.ts';
import { asList } from '../kernel/paging.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { verifiedDomainsOfOrganization } from '../organization-domains/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { DEPROVISION_BATCH, deprovisionSomeOfDirectory } from './provisioning.ts';
import type {
  CreateDirectoryInput,
  Directory,
  DirectoryGroup,
  DirectoryUser,
  DirectoryWithToken,
  ListDirectoriesInput,
  ListDirectoryGroupsInput,
  ListDirectoryUsersInput,
} from './schemas.ts';
import {
  assertBelowDirectoriesPerOrganization,
  type DirectoryGroupRow,
  type DirectoryRow,
  type DirectoryUserRow,
  deleteDirectoryRow,
  directoryCounts,
  groupsOfDirectoryUsers,
  insertDirectory,
  loadDirectory,
  loadDirectoryGroup,
  loadDirectoryUser,
  pageOfDirectories,
  pageOfDirectoryGroups,
  pageOfDirectoryUsers,
  roleSlugsOfDirectoryUsers,
  updateDirectory,
} from './store.ts';

// ---- wire shapes (the single place each row becomes what the API shows) ----

export function toDirectory(
  row: DirectoryRow,
  counts?: { active: number; inactive: number; groups: number },
): Directory {
  const directory: Directory = {
    object: 'directory',
    id: row.id,
    organization_id: row.organizationId,
    external_key: row.externalKey,
    type: row.type,
    state: row.state,
    name: row.name,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
  // Optional upstream fields are absent when unknown (assigned, not spread: tests/src/patches/v8-promotion.test.ts).
  if (row.domain !== null) directory.domain = row.domain;
  if (counts) {
    directory.metadata = { users: { active: counts.active, inactive: counts.inactive }, groups: counts.groups };
  }
  return directory;
}

/**
 * A directory as upstream's `dsync.activated` and `dsync.deactivated` carry it: the directory
 * with the organization's verified `domains` in place of `domain`, and the event's states
 * (`linked` is `active`, `unlinked` is `inactive`, as the SDK reads them).
 */
export function toDirectoryEvent(row: DirectoryRow, domains: { id: string; domain: string }[]) {
  const state = row.state === 'linked' ? 'active' : row.state === 'unlinked' ? 'inactive' : row.state;
  return {
    object: 'directory' as const,
    id: row.id,
    organization_id: row.organizationId,
    external_key: row.externalKey,
    type: row.type,
    state,
    name: row.name,
    domains: domains.map((d) => ({ object: 'organization_domain' as const, id: d.id, domain: d.domain })),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function toDirectoryGroup(row: DirectoryGroupRow): DirectoryGroup {
  return {
    object: 'directory_group',
    id: row.id,
    idp_id: row.externalId ?? row.id,
    directory_id: row.directoryId,
    organization_id: row.organizationId,
    name: row.displayName,
    raw_attributes: row.attributes,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** A SCIM user's `emails` as upstream's deprecated `emails` shows them. */
function emailsOf(attributes: Record<string, unknown>): DirectoryUser['emails'] {
  const emails = attributes.emails;
  if (!Array.isArray(emails)) return [];
  return emails
    .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null)
    .map((e) => {
      const email: DirectoryUser['emails'][number] = { value: typeof e.value === 'string' ? e.value : null };
      if (typeof e.primary === 'boolean') email.primary = e.primary;
      if (typeof e.type === 'string') email.type = e.type;
      return email;
    });
}

export function toDirectoryUser(
  row: DirectoryUserRow,
  groups: DirectoryGroupRow[],
  roles?: { slug: string }[],
): DirectoryUser {
  const name = [row.firstName, row.lastName].filter(Boolean).join(' ');
  const title = row.attributes.title;
  return {
    object: 'directory_user',
    id: row.id,
    directory_id: row.directoryId,
    organization_id: row.organizationId,
    idp_id: row.externalId ?? row.id,
    email: row.email,
    first_name: row.firstName,
    last_name: row.lastName,
    name: name === '' ? null : name,
    emails: emailsOf(row.attributes),
    job_title: typeof title === 'string' ? title : null,
    username: row.userName,
    state: row.state,
    raw_attributes: row.attributes,
    custom_attributes: row.customAttributes,
    ...(roles && roles.length > 0 ? { role: roles[0] as { slug: string }, roles } : {}),
    groups: groups.map(toDirectoryGroup),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

// ---- directories ----

const TOKEN_PREFIX_LENGTH = 13;

function newScimToken(): string {
  return `scim_${randomBase62(40)}`;
}

/** Where a directory's identity provider sends SCIM requests: this server's public base URL. */
export function scimBaseUrl(deps: Deps, directoryId: string): string {
  return `${deps.tokens.issuer.replace(/\/+$/, '')}/scim/v2/${directoryId}`;
}

/** Operator: a directory of an organization, with its SCIM token (shown this once). */
export async function createDirectory(
  scope: Scope,
  input: z.output<typeof CreateDirectoryInput>,
): Promise<DirectoryWithToken> {
  const token = newScimToken();
  const row = await scope.db.transaction(async (tx) => {
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowDirectoriesPerOrganization(tx, scope, organization.id);
    const now = scope.now();
    return insertDirectory(tx, {
      id: newId('directory'),
      environmentId: scope.env.id,
      organizationId: organization.id,
      type: input.type as DirectoryType,
      name: input.name,
      state: 'unlinked',
      externalKey: randomBase62(16),
      domain: input.domain ?? null,
      tokenHash: sha256Hex(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      createdAt: now,
      updatedAt: now,
    });
  });
  return { ...toDirectory(row), scim_base_url: scimBaseUrl(scope.deps, row.id), bearer_token: token };
}

/**
 * A directory's SCIM token stopped working (rotated, the directory deactivated or deleting), the
 * change committed: this process forgets it at once, the others when the notification arrives
 * (within apiKeyCacheTtlMs if they do not hear it: auth/directory-token.ts).
 */
async function forgetDirectoryToken(deps: Deps, directoryId: string): Promise<void> {
  forgetLocally(deps, 'directory', directoryId);
  await publishInvalidation(deps.db, 'directory', directoryId);
}

/** Operator: replaces a directory's SCIM token; the old one stops working at once. */
export async function rotateDirectoryToken(scope: Scope, id: string): Promise<DirectoryWithToken> {
  const token = newScimToken();
  const row = orNotFound(
    await updateDirectory(scope.db, scope.env.id, id, {
      tokenHash: sha256Hex(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      updatedAt: scope.now(),
    }),
    'directory',
    id,
  );
  await forgetDirectoryToken(scope.deps, row.id);
  return { ...toDirectory(row), scim_base_url: scimBaseUrl(scope.deps, row.id), bearer_token: token };
}

/** `GET /directories/:id`, with its counts. */
export async function getDirectory(scope: Scope, id: string): Promise<Directory> {
  const row = await loadDirectory(scope.db, scope.env.id, id);
  const counts = await directoryCounts(scope.db, [row.id]);
  return toDirectory(row, counts.get(row.id));
}

/** `GET /directories`: keyset pages, by organization or name. */
export async function listDirectories(scope: Scope, input: z.infer<typeof ListDirectoriesInput>) {
  const page = await pageOfDirectories(scope.db, scope.env.id, pageParams(input), {
    organizationId: input.organization_id,
    search: input.search,
    domain: input.domain,
  });
  const counts = await directoryCounts(
    scope.db,
    page.rows.map((row) => row.id),
  );
  return asList(page, (row) => toDirectory(row, counts.get(row.id)));
}

/**
 * `DELETE /directories/:id` and the operator's delete. A directory may hold 100,000 users, so this
 * is not one transaction: (1) the directory turns `deleting` and its SCIM token stops working, at
 * once; (2) its users are deleted in batches of DEPROVISION_BATCH, one transaction each, each
 * batch deactivating the memberships it provisioned and ending their sessions in the organization
 * (`organization_membership.updated`, `session.revoked`), then its groups likewise; (3) one last
 * transaction holds the directory's row (so an in-flight SCIM write finishes first), deprovisions
 * whatever that write added, deletes the row and records `dsync.deleted` (state `deleting`). As
 * upstream, no `dsync.user.deleted` or `dsync.group.deleted` is sent for the directory's users and
 * groups: `dsync.deleted` says it. Interrupted (a crash), the directory stays `deleting`, reads
 * show it so, and deleting it again carries on.
 */
export async function deleteDirectory(
  scope: Scope,
  id: string,
  options: { batchSize?: number } = {},
): Promise<Directory> {
  const batch = options.batchSize ?? DEPROVISION_BATCH;
  const marked = await scope.db.transaction(async (tx) => {
    const row = await loadDirectory(tx, scope.env.id, id, 'update');
    if (row.state === 'deleting') return false;
    await updateDirectory(tx, scope.env.id, id, {
      state: 'deleting',
      tokenHash: sha256Hex(newScimToken()),
      updatedAt: scope.now(),
    });
    return true;
  });
  if (marked) await forgetDirectoryToken(scope.deps, id);
  const target = await loadDirectory(scope.db, scope.env.id, id);
  while (
    (await scope.db.transaction((tx) =>
      withEventsBatched(tx, () => deprovisionSomeOfDirectory(tx, scope, target, batch)),
    )) > 0
  ) {
    // one batch per transaction
  }
  return scope.db.transaction(async (tx) => {
    orNotFound(await loadDirectory(tx, scope.env.id, id, 'update'), 'directory', id);
    while ((await deprovisionSomeOfDirectory(tx, scope, target, batch)) > 0) {
      // what a SCIM write in flight added meanwhile
    }
    const row = orNotFound(await deleteDirectoryRow(tx, scope.env.id, id), 'directory', id);
    const directory = toDirectory({ ...row, state: 'deleting' });
    const { external_key: _key, domain: _domain, metadata: _metadata, ...data } = directory;
    await recordEvent(tx, scope, 'dsync.deleted', data);
    return directory;
  });
}

/**
 * Operator: turns a directory off without deleting it (`dsync.deactivated`): it becomes
 * `unlinked` and its SCIM token stops working. What it provisioned stays as it is. A new token
 * (`rotateDirectoryToken`) lets the identity provider write again, and its first write activates
 * the directory again (`dsync.activated`). Deactivating an unlinked directory changes nothing.
 */
export async function deactivateDirectory(scope: Scope, id: string): Promise<Directory> {
  let rotated = false;
  const directory = await scope.db.transaction(async (tx) => {
    const current = await loadDirectory(tx, scope.env.id, id, 'update');
    if (current.state === 'unlinked' || current.state === 'deleting') return toDirectory(current);
    rotated = true;
    const row = orNotFound(
      await updateDirectory(tx, scope.env.id, id, {
        state: 'unlinked',
        tokenHash: sha256Hex(newScimToken()),
        updatedAt: scope.now(),
      }),
      'directory',
      id,
    );
    const domains = await verifiedDomainsOfOrganization(tx, row.organizationId);
    await recordEvent(tx, scope, 'dsync.deactivated', toDirectoryEvent(row, domains));
    return toDirectory(row);
  });
  if (rotated) await forgetDirectoryToken(scope.deps, id);
  return directory;
}

// ---- directory users and groups, as the REST API reads them ----

/** Directory users with their groups, and the roles of those that map to one (as the events carry them). */
async function withGroups(db: Db, rows: DirectoryUserRow[]): Promise<DirectoryUser[]> {
  const ids = rows.map((row) => row.id);
  const groups = await groupsOfDirectoryUsers(db, ids);
  const roleSlugs = await roleSlugsOfDirectoryUsers(db, ids);
  return rows.map((row) =>
    toDirectoryUser(
      row,
      groups.get(row.id) ?? [],
      (roleSlugs.get(row.id) ?? []).map((slug) => ({ slug })),
    ),
  );
}

export async function getDirectoryUser(scope: Scope, id: string): Promise<DirectoryUser> {
  const row = await loadDirectoryUser(scope.db, scope.env.id, id);
  const [user] = await withGroups(scope.db, [row]);
  return user as DirectoryUser;
}

/**
 * Upstream refuses a list of directory users (groups) that names neither a directory nor a group
 * (user): 422, each field named. A filter naming a directory, group or user this environment does
 * not have is 404, as upstream declares.
 */
function requireFilter(filters: Record<string, string | undefined>): void {
  const names = Object.keys(filters);
  if (names.some((name) => filters[name] !== undefined)) return;
  const message = `Please provide either "${names.join('" or "')}".`;
  throw invalid(names.map((field) => ({ field, code: `${field}_required`, message })));
}

export async function listDirectoryUsers(scope: Scope, input: z.infer<typeof ListDirectoryUsersInput>) {
  requireFilter({ directory: input.directory, group: input.group });
  if (input.directory !== undefined) await loadDirectory(scope.db, scope.env.id, input.directory);
  if (input.group !== undefined) await loadDirectoryGroup(scope.db, scope.env.id, input.group);
  const page = await pageOfDirectoryUsers(scope.db, scope.env.id, pageParams(input), {
    directoryId: input.directory,
    groupId: input.group,
  });
  const data = await withGroups(scope.db, page.rows);
  return { object: 'list' as const, data, list_metadata: { before: page.before, after: page.after } };
}

export async function getDirectoryGroup(scope: Scope, id: string): Promise<DirectoryGroup> {
  return toDirectoryGroup(await loadDirectoryGroup(scope.db, scope.env.id, id));
}

export async function listDirectoryGroups(scope: Scope, input: z.infer<typeof ListDirectoryGroupsInput>) {
  requireFilter({ directory: input.directory, user: input.user });
  if (input.directory !== undefined) await loadDirectory(scope.db, scope.env.id, input.directory);
  if (input.user !== undefined) await loadDirectoryUser(scope.db, scope.env.id, input.user);
  const page = await pageOfDirectoryGroups(scope.db, scope.env.id, pageParams(input), {
    directoryId: input.directory,
    directoryUserId: input.user,
  });
  return asList(page, toDirectoryGroup);
}
