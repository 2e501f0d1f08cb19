// Directory users into the organization layer (issue #36): an active directory user with an
// e-mail provisions an Atrium user (an existing user of the environment with that e-mail is linked,
// never duplicated) and an active, directory-managed membership of the directory's organization;
// deactivating or deleting it deactivates the membership and ends the user's sessions there; the
// directory's groups mapped to roles give the membership its roles. Every function works on many
// users at once, in the caller's transaction, in a fixed number of statements: a 1,000-member group
// change costs what a one-member change does, give or take the rows.
import type { Db } from '@atrium/db';
import { z } from 'zod';
import type { Scope } from '../kernel/scope.ts';
import {
  deactivateDirectoryMemberships,
  provisionDirectoryMemberships,
  setRolesOfMemberships,
} from '../organization-memberships/service.ts';
import { lockMembershipsOfUsers } from '../organization-memberships/store.ts';
import { defaultRole } from '../roles/store.ts';
import { provisionUsers } from '../users/service.ts';
import {
  deleteSomeDirectoryGroups,
  deleteSomeDirectoryUsers,
  mappedRolesOfUsers,
  usersStillProvisioned,
} from './store.ts';

const Email = z.string().trim().max(320).pipe(z.email());

/** The e-mail a directory user provisions with, if it is one a user may have (else it provisions nothing). */
export function provisionableEmail(email: string | null): string | null {
  if (email === null) return null;
  const parsed = Email.safeParse(email);
  return parsed.success ? parsed.data : null;
}

/** A directory user to provision: its id, the Atrium user it links already (if any), e-mail and names. */
export interface ProvisionTarget {
  directoryUserId: string;
  userId: string | null;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
}

/** What `linkDirectoryUsers` found: each directory user's Atrium user, and each user's "created just now". */
export interface DirectoryUserLinks {
  linked: Map<string, string>;
  fresh: Map<string, boolean>;
}

/**
 * Provisions these (active) directory users of the organization: each one with a user already, or
 * with a usable e-mail, gets its user (found by e-mail or created) and an active, directory-managed
 * membership. A membership that starts now (created, or active again) whose user may hold mapped
 * groups gets their roles (`mayHaveGroups`: the directory users may be group members already; a
 * directory user just created is not). Answers the Atrium user of each directory user provisioned.
 */
export async function provisionDirectoryUsers(
  tx: Db,
  scope: Scope,
  organizationId: string,
  targets: ProvisionTarget[],
  mayHaveGroups: boolean,
): Promise<Map<string, string>> {
  const links = await linkDirectoryUsers(tx, scope, targets);
  await provisionLinkedMemberships(tx, scope, organizationId, links, mayHaveGroups);
  return links.linked;
}

/**
 * `provisionDirectoryUsers`' first half: the Atrium user of each target (its own, else found by
 * its usable e-mail or created). A caller with a write that needs only these ids sends it beside
 * the second half (`provisionLinkedMemberships`), so both go in one round trip.
 */
export async function linkDirectoryUsers(
  tx: Db,
  scope: Scope,
  targets: ProvisionTarget[],
): Promise<DirectoryUserLinks> {
  const emails = new Map(
    targets.map((t) => [t.directoryUserId, t.userId === null ? provisionableEmail(t.email) : null]),
  );
  const people = targets.flatMap((t) => {
    const email = emails.get(t.directoryUserId);
    return email ? [{ email, firstName: t.firstName, lastName: t.lastName }] : [];
  });
  const users = people.length > 0 ? await provisionUsers(tx, scope, people) : new Map();
  const linked = new Map<string, string>();
  const fresh = new Map<string, boolean>();
  for (const t of targets) {
    const email = emails.get(t.directoryUserId);
    const found = email ? users.get(email.toLowerCase()) : undefined;
    const userId = t.userId ?? found?.user.id;
    if (!userId) continue;
    linked.set(t.directoryUserId, userId);
    fresh.set(userId, (fresh.get(userId) ?? true) && found?.created === true);
  }
  return { linked, fresh };
}

/** `provisionDirectoryUsers`' second half: the linked users' memberships, and their mapped roles. */
export async function provisionLinkedMemberships(
  tx: Db,
  scope: Scope,
  organizationId: string,
  { fresh }: DirectoryUserLinks,
  mayHaveGroups: boolean,
): Promise<void> {
  if (fresh.size === 0) return;
  const memberships = await provisionDirectoryMemberships(
    tx,
    scope,
    organizationId,
    [...fresh].map(([userId, isFresh]) => ({ userId, fresh: isFresh })),
  );
  const started = [...memberships]
    .filter(([userId, m]) => m.startedNow && (mayHaveGroups || !fresh.get(userId)))
    .map(([userId]) => userId);
  if (started.length > 0) await syncDirectoryRoles(tx, scope, organizationId, started, false);
}

/**
 * These Atrium users lost a directory user of the organization (deactivated or deleted): the
 * membership of each that no other active directory user of the organization provisions is
 * deactivated and their sessions there end. Answers the users deactivated.
 */
export async function deprovisionUsers(
  tx: Db,
  scope: Scope,
  organizationId: string,
  userIds: string[],
): Promise<string[]> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return [];
  const kept = await usersStillProvisioned(tx, organizationId, unique);
  return deactivateDirectoryMemberships(
    tx,
    scope,
    organizationId,
    unique.filter((id) => !kept.has(id)),
  );
}

/**
 * Gives the directory-managed memberships of these users the roles of their mapped groups (every
 * directory of the organization; each role once, ordered by slug, so `role` is the first of them).
 * A user in no mapped group gets the environment's default role when `fallback` (they left one, or
 * its mapping went), else keeps the roles they hold. Memberships are held first, so concurrent
 * changes of one user's groups apply one after the other. `organization_membership.updated` once
 * per membership whose roles change.
 */
export async function syncDirectoryRoles(
  tx: Db,
  scope: Scope,
  organizationId: string,
  userIds: string[],
  fallback: boolean,
): Promise<void> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return;
  const held = (await lockMembershipsOfUsers(tx, scope.env.id, organizationId, unique)).filter(
    (row) => row.directoryManaged,
  );
  if (held.length === 0) return;
  const mapped = await mappedRolesOfUsers(
    tx,
    organizationId,
    held.map((row) => row.userId),
  );
  const byUser = new Map<string, { ids: string[]; slugs: Set<string> }>();
  for (const { userId, roleId, slug } of mapped) {
    const entry = byUser.get(userId) ?? { ids: [], slugs: new Set<string>() };
    if (!entry.slugs.has(slug)) {
      entry.slugs.add(slug);
      entry.ids.push(roleId);
    }
    byUser.set(userId, entry);
  }
  const wanted = new Map<string, string[]>();
  let fallbackRole: string | undefined;
  for (const membership of held) {
    const roles = byUser.get(membership.userId)?.ids ?? [];
    if (roles.length > 0) wanted.set(membership.id, roles);
    else if (fallback) {
      fallbackRole ??= (await defaultRole(tx, scope.env.id, 'key share'))?.id;
      if (fallbackRole) wanted.set(membership.id, [fallbackRole]);
    }
  }
  await setRolesOfMemberships(tx, scope, wanted);
}

/** Directory users deleted per transaction while a directory is deleted. */
export const DEPROVISION_BATCH = 500;

/**
 * One step of a directory's deletion, in the caller's transaction: deletes up to `limit` of its
 * users (their group memberships go with them) and deprovisions them, else, once no user is left,
 * up to `limit` of its groups. Answers how many rows it deleted (0: nothing is left).
 */
export async function deprovisionSomeOfDirectory(
  tx: Db,
  scope: Scope,
  directory: { id: string; organizationId: string },
  limit = DEPROVISION_BATCH,
): Promise<number> {
  const users = await deleteSomeDirectoryUsers(tx, directory.id, limit);
  if (users.length > 0) {
    await deprovisionUsers(
      tx,
      scope,
      directory.organizationId,
      users.flatMap((row) => (row.userId ? [row.userId] : [])),
    );
    return users.length;
  }
  return deleteSomeDirectoryGroups(tx, directory.id, limit);
}
