// What other resources do, in the caller's transaction, when memberships are deleted. Those
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
