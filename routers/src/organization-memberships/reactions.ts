// What other resources do, in the caller's transaction, when memberships are deleted or end. Those
// resources read memberships (organization-memberships/store.ts), so this folder cannot import
// them back (no folder cycle): they register here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import { reactions } from '../kernel/reactions.ts';
import type { Scope } from '../kernel/scope.ts';

/** A reaction to the deletion of these memberships (before their rows go), in the caller's transaction. */
export type MembershipsDeleted = (tx: Db, scope: Scope, membershipIds: string[]) => Promise<void>;

const deleted = reactions<Parameters<MembershipsDeleted>>('a membership deletion');

/** Registers a reaction to memberships' deletion; registering the same function again does nothing. */
export const onMembershipsDeleted: (reaction: MembershipsDeleted) => void = deleted.on;

/** Runs every registered reaction, in registration order (none: its API keys' revocation would be skipped). */
export async function membershipsDeleted(tx: Db, scope: Scope, membershipIds: string[]): Promise<void> {
  await deleted.run(tx, scope, membershipIds);
}

/** A reaction to memberships of one organization that stopped (deactivated or deleted): their users' sessions there end. */
export type MembershipsEnded = (
  tx: Db,
  scope: Scope,
  ended: { organizationId: string; userIds: string[] },
) => Promise<unknown>;

const ended = reactions<Parameters<MembershipsEnded>>('a membership ending');

/** Registers a reaction to memberships that stopped; registering the same function again does nothing. */
export const onMembershipsEnded: (reaction: MembershipsEnded) => void = ended.on;

/** Runs every registered reaction to memberships that stopped. */
export async function membershipsEnded(
  tx: Db,
  scope: Scope,
  stopped: { organizationId: string; userIds: string[] },
): Promise<void> {
  await ended.run(tx, scope, stopped);
}
