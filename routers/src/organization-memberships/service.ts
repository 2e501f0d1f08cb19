import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, pageParams, wireTime } from '../common/schemas.ts';
import { recordEvent, recordEvents } from '../events/record.ts';
import { notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertRoleSlugs, noDefaultRole } from '../roles/service.ts';
import { replaceMembershipRoles, roleIdsOfMemberships } from '../roles/store.ts';
import { toUser } from '../user-wire.ts';
import { findUser } from '../users/store.ts';
import { membershipsDeleted, membershipsEnded } from './reactions.ts';
import type {
  CreateOrganizationMembershipInput,
  ListOrganizationMembershipsInput,
  OrganizationMembership,
  UpdateOrganizationMembershipInput,
} from './schemas.ts';
import {
  assertBelowMembershipsPerUser,
  deleteMembership,
  findMembership,
  insertMembership,
  insertMembershipsWithDefaultRole,
  lockMembership,
  lockMembershipsOfUsers,
  type MembershipRecord,
  type MembershipRow,
  membershipsOfUser,
  membershipsWithIds,
  pageOfMemberships,
  replaceRolesOfMemberships,
  setMembershipsState,
  touchMembership,
  updateMembershipStatus,
} from './store.ts';

/** The membership as it stops (its user's live sessions in its organization end: sessions/, registered in app-router.ts). */
const stoppedOf = (m: { userId: string; organizationId: string }) => ({
  organizationId: m.organizationId,
  userIds: [m.userId],
});

/** The single place that turns a membership (with its organization's name and user) into its wire shape. */
export function toOrganizationMembership(row: MembershipRecord): OrganizationMembership {
  // The event's object is new and this call's own: the user goes onto it rather than into a copy
  // (a list page made a second 12-field object per row).
  const membership = toMembershipEvent(row) as OrganizationMembership;
  membership.user = toUser(row.user);
  return membership;
}

/** A membership as upstream's `organization_membership.*` events carry it: without the embedded user. */
export function toMembershipEvent(row: Omit<MembershipRecord, 'user'>): Omit<OrganizationMembership, 'user'> {
  return {
    object: 'organization_membership',
    id: row.id,
    user_id: row.userId,
    organization_id: row.organizationId,
    organization_name: row.organizationName,
    status: row.status,
    directory_managed: row.directoryManaged,
    custom_attributes: row.customAttributes,
    role: { slug: row.roleSlugs[0] as string },
    roles: row.roleSlugs.map((slug) => ({ slug })),
    created_at: wireTime(row.createdAt),
    updated_at: wireTime(row.updatedAt),
  };
}

/**
 * Records the deletion of each of the user's memberships (`organization_membership.deleted`), in
 * the caller's transaction, before the user's deletion takes them by cascade (registered in app-router.ts).
 */
export async function recordMembershipsOfDeletedUser(tx: Db, scope: Scope, userId: string): Promise<void> {
  for (const membership of await membershipsOfUser(tx, scope.env.id, userId)) {
    await recordEvent(tx, scope, 'organization_membership.deleted', toMembershipEvent(membership));
  }
}

export async function getOrganizationMembership(scope: Scope, id: string): Promise<OrganizationMembership> {
  return toOrganizationMembership(await findMembership(scope.db, scope.env.id, id));
}

export async function listOrganizationMemberships(
  scope: Scope,
  input: z.infer<typeof ListOrganizationMembershipsInput>,
) {
  const page = await pageOfMemberships(scope.db, scope.env.id, pageParams(input), {
    userId: input.user_id,
    organizationId: input.organization_id,
    statuses: input.statuses,
  });
  return asList(page, toOrganizationMembership);
}

/** What a new membership is made of (the REST create, and an accepted invitation). */
export interface NewMembershipInput {
  userId: string;
  organizationId: string;
  roleSlug?: string | undefined;
  roleSlugs?: string[] | undefined;
  /** Managed by a directory (upstream sets it from directory sync): the client surfaces refuse to edit it. */
  directoryManaged?: boolean | undefined;
}

/**
 * A check a caller adds to a membership change, run in its transaction once the membership is
 * held (and, for an update, the new roles resolved); it throws to refuse. The client surfaces'
 * rules (the last admin, directory-managed members) use it; the API-key path passes none.
 */
export type MembershipGuard = (tx: Db, before: MembershipRow, nextRoleSlugs: string[] | null) => Promise<void>;

/**
 * Creates a membership in the caller's transaction: the user and organization must exist in
 * the environment (404), the role slugs must name roles of the organization or environment
 * (422 `role_not_found`; none: the default role), the user must not be a member already (409).
 * Records `organization_membership.created` and returns the membership.
 */
export async function addMembership(tx: Db, scope: Scope, input: NewMembershipInput): Promise<OrganizationMembership> {
  // The user and the organization are held so that a concurrent delete of either waits, or
  // won and this answers 404; the user's lock also serialises the memberships-per-user count.
  const user = await findUser(tx, scope.env.id, input.userId, 'no key update');
  await assertBelowMembershipsPerUser(tx, scope, user.id);
  const organization = await requireOrganization(tx, scope, input.organizationId, 'share');
  const roles = await assertRoleSlugs(tx, scope, organization.id, input);
  const now = scope.now();
  const row = await insertMembership(tx, {
    id: newId('organizationMembership'),
    environmentId: scope.env.id,
    userId: user.id,
    organizationId: organization.id,
    status: 'active',
    directoryManaged: input.directoryManaged ?? false,
    customAttributes: {},
    createdAt: now,
    updatedAt: now,
  });
  await replaceMembershipRoles(
    tx,
    scope.env.id,
    row.id,
    roles.map((r) => r.id),
  );
  const created = { ...row, organizationName: organization.name, roleSlugs: roles.map((r) => r.slug), user };
  await recordEvent(tx, scope, 'organization_membership.created', toMembershipEvent(created));
  return toOrganizationMembership(created);
}

/**
 * The membership a first sign-in provisions (SSO Just-in-time), in the sign-in's transaction,
 * which holds the organization (`share`) already. A `fresh` user was created in this transaction:
 * it holds no membership and nothing else can see it, so it is neither locked nor counted; any
 * other user is, as in `addMembership`. The environment's default role is given and the event's
 * fields answered with the insert, in one statement (`insertMembershipsWithDefaultRole`); without a
 * default role nothing is kept.
 */
export async function addSignInMembership(
  tx: Db,
  scope: Scope,
  input: { userId: string; fresh: boolean; organization: { id: string; name: string } },
): Promise<void> {
  if (!input.fresh) {
    await findUser(tx, scope.env.id, input.userId, 'no key update');
    await assertBelowMembershipsPerUser(tx, scope, input.userId);
  }
  const now = scope.now();
  const row = {
    id: newId('organizationMembership'),
    environmentId: scope.env.id,
    userId: input.userId,
    organizationId: input.organization.id,
    status: 'active' as const,
    directoryManaged: false,
    customAttributes: {},
    createdAt: now,
    updatedAt: now,
  };
  const given = await insertMembershipsWithDefaultRole(tx, scope.env.id, row.organizationId, [row], now, false);
  // Inserted by a concurrent request first (which recorded its own event): the user is a member.
  if (!given.inserted.has(row.id)) return;
  if (given.roleSlugs.length === 0) throw noDefaultRole();
  await recordEvent(tx, scope, 'organization_membership.created', toMembershipEvent(Object.assign({}, row, given)));
}

export async function createOrganizationMembership(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationMembershipInput>,
): Promise<OrganizationMembership> {
  return scope.db.transaction((tx) =>
    addMembership(tx, scope, {
      userId: input.user_id,
      organizationId: input.organization_id,
      roleSlug: input.role_slug,
      roleSlugs: input.role_slugs,
      directoryManaged: input.directory_managed,
    }),
  );
}

/**
 * Changes a membership's roles (`updateOrganizationMembership`). Concurrent changes of one
 * membership are serialised on its row: the last to commit is what stays. Neither slug field,
 * or the roles it holds already, is a no-op without an event.
 */
export async function updateOrganizationMembership(
  scope: Scope,
  input: z.infer<typeof UpdateOrganizationMembershipInput>,
  guard?: MembershipGuard,
): Promise<OrganizationMembership> {
  return scope.db.transaction(async (tx) => {
    const current = await lockMembership(tx, scope.env.id, input.id);
    const before = await findMembership(tx, scope.env.id, current.id);
    if (input.role_slug === undefined && input.role_slugs === undefined) return toOrganizationMembership(before);
    const roles = await assertRoleSlugs(tx, scope, current.organizationId, {
      roleSlug: input.role_slug,
      roleSlugs: input.role_slugs,
    });
    const slugs = roles.map((r) => r.slug);
    await guard?.(tx, before, slugs);
    if (slugs.join('\n') === before.roleSlugs.join('\n')) return toOrganizationMembership(before);
    await replaceMembershipRoles(
      tx,
      scope.env.id,
      current.id,
      roles.map((r) => r.id),
    );
    await touchMembership(tx, current.id, scope.now());
    const after = await findMembership(tx, scope.env.id, current.id);
    await recordEvent(tx, scope, 'organization_membership.updated', toMembershipEvent(after));
    return toOrganizationMembership(after);
  });
}

/** Deactivate and reactivate: sets the status; an unchanged status is a no-op without an event. */
export async function setMembershipStatus(
  scope: Scope,
  id: string,
  status: 'active' | 'inactive',
): Promise<OrganizationMembership> {
  return scope.db.transaction(async (tx) => {
    const current = await lockMembership(tx, scope.env.id, id);
    const changed = current.status !== status;
    if (changed) await updateMembershipStatus(tx, current.id, status, scope.now());
    const after = await findMembership(tx, scope.env.id, id);
    if (changed) await recordEvent(tx, scope, 'organization_membership.updated', toMembershipEvent(after));
    if (changed && status === 'inactive') await membershipsEnded(tx, scope, stoppedOf(current));
    return toOrganizationMembership(after);
  });
}

/** Deletes the membership; its group links go with it by foreign key, in the same statement. */
export async function deleteOrganizationMembership(scope: Scope, id: string, guard?: MembershipGuard): Promise<void> {
  await scope.db.transaction(async (tx) => {
    if (guard) await lockMembership(tx, scope.env.id, id);
    const current = await findMembership(tx, scope.env.id, id);
    await guard?.(tx, current, null);
    await membershipsDeleted(tx, scope, [current.id]);
    if (!(await deleteMembership(tx, scope.env.id, id))) throw notFound('organization_membership', id);
    await recordEvent(tx, scope, 'organization_membership.deleted', toMembershipEvent(current));
    await membershipsEnded(tx, scope, stoppedOf(current));
  });
}

// ---- directory-managed memberships (directories/provisioning.ts), many at once ----

/** Records `organization_membership.<what>` for each of these memberships, read as they are now. */
async function recordMembershipEvents(tx: Db, scope: Scope, what: 'created' | 'updated', ids: string[]) {
  if (ids.length === 0) return;
  const rows = await membershipsWithIds(tx, scope.env.id, ids);
  await recordEvents(
    tx,
    scope,
    rows.map((row) => ({ event: `organization_membership.${what}`, data: toMembershipEvent(row) })),
  );
}

/** What provisioning did to each user's membership. */
export interface ProvisionedMembership {
  membershipId: string;
  /** Created here, or made active again: its roles may need the directory's mapping. */
  startedNow: boolean;
}

/**
 * Makes each user an active, directory-managed member of the organization, in the caller's
 * transaction: a new membership gets the environment's default role (`organization_membership.created`);
 * an existing one becomes directory-managed and active (`organization_membership.updated` when that
 * changed it). `fresh` users were created in this transaction, so they hold no membership yet and
 * are not counted against `membershipsPerUser`; any other user without a membership is held and
 * counted as `addMembership` does. Keyed by user id.
 */
export async function provisionDirectoryMemberships(
  tx: Db,
  scope: Scope,
  organizationId: string,
  users: { userId: string; fresh: boolean }[],
): Promise<Map<string, ProvisionedMembership>> {
  const result = new Map<string, ProvisionedMembership>();
  const known = users.filter((u) => !u.fresh).map((u) => u.userId);
  const existing = await lockMembershipsOfUsers(tx, scope.env.id, organizationId, known);
  for (const row of existing) result.set(row.userId, { membershipId: row.id, startedNow: row.status !== 'active' });
  const missing = users.filter((u) => !result.has(u.userId));
  for (const user of missing) {
    if (user.fresh) continue;
    await findUser(tx, scope.env.id, user.userId, 'no key update');
    await assertBelowMembershipsPerUser(tx, scope, user.userId);
  }
  const now = scope.now();
  const wanted = missing.map((user) => ({ id: newId('organizationMembership'), userId: user.userId }));
  const given = await insertMembershipsWithDefaultRole(tx, scope.env.id, organizationId, wanted, now, true);
  const inserted = wanted
    .filter((m) => given.inserted.has(m.id))
    .map((m) => ({
      id: m.id,
      environmentId: scope.env.id,
      userId: m.userId,
      organizationId,
      status: 'active' as const,
      directoryManaged: true,
      customAttributes: {},
      createdAt: now,
      updatedAt: now,
    }));
  for (const row of inserted) result.set(row.userId, { membershipId: row.id, startedNow: true });
  // A concurrent transaction made some of them first (the insert waited for it): take those as existing.
  const raced = missing.filter((u) => !result.has(u.userId)).map((u) => u.userId);
  for (const row of await lockMembershipsOfUsers(tx, scope.env.id, organizationId, raced)) {
    result.set(row.userId, { membershipId: row.id, startedNow: row.status !== 'active' });
    existing.push(row);
  }
  // New memberships' events are made from what was inserted and the role given: not read again.
  await recordEvents(
    tx,
    scope,
    [...inserted]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((row) => ({
        event: 'organization_membership.created',
        data: toMembershipEvent(
          Object.assign({}, row, { organizationName: given.organizationName, roleSlugs: given.roleSlugs }),
        ),
      })),
  );
  const changed = await setMembershipsState(
    tx,
    existing.filter((row) => row.status !== 'active' || !row.directoryManaged).map((row) => row.id),
    { status: 'active', directoryManaged: true },
    now,
  );
  await recordMembershipEvents(tx, scope, 'updated', changed);
  return result;
}

/**
 * Deactivates the directory-managed memberships of these users in the organization, in the
 * caller's transaction (`organization_membership.updated` for each that was active), and ends
 * their sessions there at once (`session.revoked`): a directory deactivated or deleted them.
 * Answers the user ids whose membership it deactivated.
 */
export async function deactivateDirectoryMemberships(
  tx: Db,
  scope: Scope,
  organizationId: string,
  userIds: string[],
): Promise<string[]> {
  const held = (await lockMembershipsOfUsers(tx, scope.env.id, organizationId, userIds)).filter(
    (row) => row.directoryManaged && row.status === 'active',
  );
  const changed = await setMembershipsState(
    tx,
    held.map((row) => row.id),
    { status: 'inactive' },
    scope.now(),
  );
  await recordMembershipEvents(tx, scope, 'updated', changed);
  const deactivated = new Set(changed);
  const users = held.filter((row) => deactivated.has(row.id)).map((row) => row.userId);
  await membershipsEnded(tx, scope, { organizationId, userIds: users });
  return users;
}

/**
 * Gives each membership its roles (role ids, in order) where they differ from what it holds, in
 * the caller's transaction, which holds the memberships: `organization_membership.updated` once
 * for each that changed, none for the others.
 */
export async function setRolesOfMemberships(tx: Db, scope: Scope, wanted: Map<string, string[]>): Promise<string[]> {
  const held = await roleIdsOfMemberships(tx, [...wanted.keys()]);
  const changes = new Map<string, string[]>();
  for (const [id, roleIds] of wanted) {
    if ((held.get(id) ?? []).join('\n') !== roleIds.join('\n')) changes.set(id, roleIds);
  }
  await replaceRolesOfMemberships(tx, scope.env.id, changes, scope.now());
  await recordMembershipEvents(tx, scope, 'updated', [...changes.keys()]);
  return [...changes.keys()];
}
