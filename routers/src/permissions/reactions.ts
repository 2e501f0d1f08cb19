// What other resources do, in the caller's transaction, when a permission is deleted. Roles hold
// permissions (roles/store.ts reads permissions/store.ts), so this folder cannot import them back
// (no folder cycle): they register here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import { reactions } from '../kernel/reactions.ts';
import type { Scope } from '../kernel/scope.ts';

/**
 * A reaction to a permission's deletion: it runs before the row goes (to lock what loses it) and
 * answers what to do once the row is gone and `permission.deleted` is recorded.
 */
export type PermissionDeleting = (tx: Db, scope: Scope, permissionId: string) => Promise<() => Promise<void>>;

const deleting = reactions<Parameters<PermissionDeleting>, () => Promise<void>>('a permission deletion');

/** Registers a reaction to a permission's deletion; registering the same function again does nothing. */
export const onPermissionDeleting: (reaction: PermissionDeleting) => void = deleting.on;

/**
 * Runs the first part of every registered reaction, in registration order, and answers their
 * second parts as one (none registered: roles would go on showing a deleted permission).
 */
export async function permissionDeleting(tx: Db, scope: Scope, permissionId: string): Promise<() => Promise<void>> {
  const after = await deleting.run(tx, scope, permissionId);
  return async () => {
    for (const next of after) await next();
  };
}
