// What other resources do, in the caller's transaction, when a permission is deleted. Roles hold
// permissions (roles/store.ts reads permissions/store.ts), so this folder cannot import them back
// (no folder cycle): they register here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';

/**
 * A reaction to a permission's deletion: it runs before the row goes (to lock what loses it) and
 * answers what to do once the row is gone and `permission.deleted` is recorded.
 */
export type PermissionDeleting = (tx: Db, scope: Scope, permissionId: string) => Promise<() => Promise<void>>;

const deleting = new Set<PermissionDeleting>();

/** Registers a reaction to a permission's deletion; registering the same function again does nothing. */
export function onPermissionDeleting(reaction: PermissionDeleting): void {
  deleting.add(reaction);
}

/**
 * Runs the first part of every registered reaction, in registration order, and answers their
 * second parts as one. None registered is an error: roles would go on showing a deleted permission.
 */
export async function permissionDeleting(tx: Db, scope: Scope, permissionId: string): Promise<() => Promise<void>> {
  if (deleting.size === 0) throw new Error('no reaction to a permission deletion is registered (app-router.ts)');
  const after: Array<() => Promise<void>> = [];
  for (const reaction of deleting) after.push(await reaction(tx, scope, permissionId));
  return async () => {
    for (const next of after) await next();
  };
}
