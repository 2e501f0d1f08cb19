// What other resources do, in the caller's transaction, when memberships are deleted or end. Those
// resources read memberships (organization-memberships/store.ts), so this folder cannot import
// them back (no folder cycle): they register here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';

/** A reaction to the deletion of these memberships (before their rows go), in the caller's transaction. */
export type MembershipsDeleted = (tx: Db, scope: Scope, membershipIds: string[]) => Promise<void>;

const deleted = new Set<MembershipsDeleted>();

/** Registers a reaction to memberships' deletion; registering the same function again does nothing. */
export function onMembershipsDeleted(reaction: MembershipsDeleted): void {
  deleted.add(reaction);
}

/**
 * Runs every registered reaction, in registration order. None registered is an error: a
 * deletion that silently skipped the revocation of its API keys would break a guarantee.
 */
export async function membershipsDeleted(tx: Db, scope: Scope, membershipIds: string[]): Promise<void> {
  if (deleted.size === 0) throw new Error('no reaction to a membership deletion is registered (app-router.ts)');
  for (const reaction of deleted) await reaction(tx, scope, membershipIds);
}

/** A reaction to memberships of one organization that stopped (deactivated or deleted): their users' sessions there end. */
export type MembershipsEnded = (
  tx: Db,
  scope: Scope,
  ended: { organizationId: string; userIds: string[] },
) => Promise<unknown>;

const ended = new Set<MembershipsEnded>();

/** Registers a reaction to memberships that stopped; registering the same function again does nothing. */
export function onMembershipsEnded(reaction: MembershipsEnded): void {
  ended.add(reaction);
}

/** Runs every registered reaction to memberships that stopped; none registered is an error (as above). */
export async function membershipsEnded(
  tx: Db,
  scope: Scope,
  stopped: { organizationId: string; userIds: string[] },
): Promise<void> {
  if (ended.size === 0) throw new Error('no reaction to a membership ending is registered (app-router.ts)');
  for (const reaction of ended) await reaction(tx, scope, stopped);
}
