import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent } from '../events/record.ts';
import { conflict } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { permissionDeleting } from './reactions.ts';
import type { CreatePermissionInput, ListPermissionsInput, Permission, UpdatePermissionInput } from './schemas.ts';
import {
  deletePermissionRow,
  findPermission,
  insertPermission,
  type PermissionRow,
  pageOfPermissions,
  updatePermissionRow,
} from './store.ts';

/** The single place that turns a permission row into its wire shape (also the `permission.*` event data). */
export function toPermission(row: PermissionRow): Permission {
  return {
    object: 'permission',
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    resource_type_slug: row.resourceTypeSlug,
    system: row.system,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export async function createPermission(
  scope: Scope,
  input: z.infer<typeof CreatePermissionInput>,
): Promise<Permission> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const row = await insertPermission(tx, scope.deps, {
      id: newId('permission'),
      environmentId: scope.env.id,
      slug: input.slug,
      name: input.name,
      description: input.description ?? null,
      resourceTypeSlug: input.resource_type_slug ?? 'organization',
      system: false,
      createdAt: now,
      updatedAt: now,
    });
    const permission = toPermission(row);
    await recordEvent(tx, scope, 'permission.created', permission);
    return permission;
  });
}

/** `search` (the client API's) matches slug or name; the API-key list has none. */
export async function listPermissions(scope: Scope, input: z.infer<typeof ListPermissionsInput>, search?: string) {
  return asList(await pageOfPermissions(scope.db, scope.env.id, pageParams(input), search), toPermission);
}

export async function getPermission(scope: Scope, slug: string): Promise<Permission> {
  return toPermission(orNotFound(await findPermission(scope.db, scope.env.id, slug), 'permission', slug));
}

/**
 * Atrium's own permissions (`system: true`, the widgets' scopes every environment holds) are read
 * only: 409 `system_permission` on an update or a delete. A role may still drop one.
 */
function assertNotSystem(row: { slug: string; system: boolean }): void {
  if (row.system) {
    throw conflict(
      'system_permission',
      `Permission '${row.slug}' is a system permission: it cannot be changed or deleted.`,
    );
  }
}

export async function updatePermission(
  scope: Scope,
  input: z.infer<typeof UpdatePermissionInput>,
): Promise<Permission> {
  return scope.db.transaction(async (tx) => {
    const current = orNotFound(await findPermission(tx, scope.env.id, input.slug, 'update'), 'permission', input.slug);
    assertNotSystem(current);
    const changes: { name?: string; description?: string | null } = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return toPermission(current);
    const permission = toPermission(await updatePermissionRow(tx, current.id, { ...changes, updatedAt: scope.now() }));
    await recordEvent(tx, scope, 'permission.updated', permission);
    return permission;
  });
}

/**
 * Deletes the permission; the roles holding it lose it (by foreign key), in the same statement,
 * and each records its `role.updated` (or `organization_role.updated`) with what it holds now.
 */
export async function deletePermission(scope: Scope, slug: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = orNotFound(await findPermission(tx, scope.env.id, slug, 'update'), 'permission', slug);
    assertNotSystem(current);
    const afterwards = await permissionDeleting(tx, scope, current.id);
    await deletePermissionRow(tx, current.id);
    await recordEvent(tx, scope, 'permission.deleted', toPermission(current));
    await afterwards();
  });
}
