// What other resources give the users resource. They read users (users/store.ts), so this folder
// cannot import them back (no folder cycle): they register here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import { reactions } from '../kernel/reactions.ts';
import type { Scope } from '../kernel/scope.ts';
import type { UserFilter } from './store.ts';

/** A reaction to a user's deletion, in the caller's transaction, before the user's row goes. */
export type UserDeleting = (tx: Db, scope: Scope, userId: string) => Promise<void>;

const deleting = reactions<Parameters<UserDeleting>>('a user deletion');

/** Registers a reaction to a user's deletion; registering the same function again does nothing. */
export const onUserDeleting: (reaction: UserDeleting) => void = deleting.on;

/** Runs every registered reaction, in registration order (their events are recorded in that order). */
export async function userDeleting(tx: Db, scope: Scope, userId: string): Promise<void> {
  await deleting.run(tx, scope, userId);
}

/** The ids of an organization's users as a subquery (the users list filtered by organization, one statement). */
export type OrganizationUserIds = (db: Db, environmentId: string, organizationId: string) => UserIds;
type UserIds = NonNullable<UserFilter['ids']>;

let organizationUserIds: OrganizationUserIds | undefined;

/** Sets where the users list reads an organization's users (the memberships store). */
export function readOrganizationUsersWith(read: OrganizationUserIds): void {
  organizationUserIds = read;
}

/** The subquery of the organization's user ids; none registered is an error (as above). */
export function usersOfOrganization(db: Db, environmentId: string, organizationId: string): UserIds {
  if (!organizationUserIds) throw new Error("no reader of an organization's users is registered (app-router.ts)");
  return organizationUserIds(db, environmentId, organizationId);
}
