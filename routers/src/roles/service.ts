import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { iso } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent } from '../events/record.ts';
import { conflict, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { lockPermissions } from '../permissions/store.ts';
import type {
  AddEnvironmentRolePermissionInput,
  AddOrganizationRolePermissionInput,
  CreateEnvironmentRoleInput,
  CreateOrganizationRoleInput,
  OrganizationRoleEvent,
  OrganizationRoleInput,
  RemoveOrganizationRolePermissionInput,
  Role,
  RoleEvent,
  SetEnvironmentRolePermissionsInput,
  SetOrganizationRolePermissionsInput,
  UpdateEnvironmentRoleInput,
  UpdateOrganizationRoleInput,
} from './schemas.ts';
import {
  addRolePermissionRow,
  assertBelowRolesPerOrganization,
  defaultRole,
  deleteRoleRow,
  environmentRoleRows,
  findRole,
  insertDefaultRoles,
  insertRole,
  insertSystemPermissions,
  lockRolesHolding,
  lockRolesNamed,
  moveDefaultRole,
  type RoleRow,
  removeRolePermissionRow,
  replaceRolePermissions,
  roleInUse,
  rolesForOrganization,
  updateRoleRow,
} from './store.ts';

/** The roles a new environment starts with; the first is its default. */
export const DEFAULT_ROLES = [
  { slug: 'member', name: 'Member' },
  { slug: 'admin', name: 'Admin' },
] as const;

/** The single place that turns a role row into its wire shape. */
export function toRole(row: RoleRow): Role {
  return {
    object: 'role',
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    permissions: row.permissions,
    resource_type_slug: row.resourceTypeSlug,
    type: row.organizationId === null ? 'EnvironmentRole' : 'OrganizationRole',
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The data of `role.*` (environment roles) and `organization_role.*` (organization roles) events. */
function roleEvent(row: RoleRow): RoleEvent | OrganizationRoleEvent {
  const times = { created_at: iso(row.createdAt), updated_at: iso(row.updatedAt) };
  if (row.organizationId === null) {
    return {
      object: 'role',
      slug: row.slug,
      resource_type_slug: row.resourceTypeSlug,
      permissions: row.permissions,
      ...times,
    };
  }
  return {
    object: 'organization_role',
    organization_id: row.organizationId,
    slug: row.slug,
    name: row.name,
    description: row.description,
    resource_type_slug: row.resourceTypeSlug,
    permissions: row.permissions,
    ...times,
  };
}

function recordRoleEvent(tx: Db, scope: Scope, row: RoleRow, change: 'created' | 'updated' | 'deleted') {
  const family = row.organizationId === null ? 'role' : 'organization_role';
  return recordEvent(tx, scope, `${family}.${change}`, roleEvent(row), row.organizationId);
}

/**
 * The system permissions every environment holds (`system: true`), granted to the default `admin`
 * role: the official widgets' scopes, so an operation-20 client token of an admin can do what a
 * widget token with those scopes can (existing environments: migrations 0016, 0023, 0031, 0034).
 */
export const SYSTEM_PERMISSIONS = [
  { slug: 'widgets:users-table:manage', name: 'Manage users (widgets)' },
  { slug: 'widgets:domain-verification:manage', name: 'Verify domains (widgets)' },
  { slug: 'widgets:sso:manage', name: 'Manage SSO connections (widgets)' },
  { slug: 'widgets:dsync:manage', name: 'Manage directory sync (widgets)' },
  { slug: 'widgets:audit-log-streaming:manage', name: 'Manage the audit log stream (widgets)' },
  { slug: 'widgets:api-keys:manage', name: 'Manage API keys (widgets)' },
  { slug: 'widgets:user-api-keys:manage-self', name: 'Manage own API keys (widgets)' },
  { slug: 'widgets:user-api-keys:manage-all', name: "Manage all members' API keys (widgets)" },
] as const;

/** Seeds a new environment's roles and system permissions in the caller's transaction (environments/service.ts). */
export async function seedDefaultRoles(tx: Db, environmentId: string, now: Date): Promise<void> {
  const seeded = DEFAULT_ROLES.map((role, index) => ({
    id: newId('role'),
    environmentId,
    slug: role.slug,
    name: role.name,
    isDefault: index === 0,
    createdAt: now,
    updatedAt: now,
  }));
  await insertDefaultRoles(tx, seeded);
  const granted = SYSTEM_PERMISSIONS.map((permission) => ({
    id: newId('permission'),
    environmentId,
    slug: permission.slug,
    name: permission.name,
    system: true,
    createdAt: now,
    updatedAt: now,
  }));
  const admin = seeded.find((role) => role.slug === 'admin');
  if (admin) await insertSystemPermissions(tx, admin.id, granted);
}

/** The role, re-read (with its permissions) after a change. */
async function reread(tx: Db, scope: Scope, row: RoleRow): Promise<RoleRow> {
  return orNotFound(await findRole(tx, scope.env.id, row.organizationId, row.slug), 'role', row.slug);
}

/** The permissions named by `slugs`, each of which must exist (else 422, naming the unknown ones). */
async function requirePermissions(tx: Db, scope: Scope, slugs: string[], field: string) {
  const unique = [...new Set(slugs)];
  const found = await lockPermissions(tx, scope.env.id, unique);
  const known = new Set(found.map((p) => p.slug));
  const missing = unique.filter((slug) => !known.has(slug));
  if (missing.length > 0) {
    throw invalid(
      missing.map((slug) => ({
        field,
        code: 'permission_not_found',
        message: `Permission '${slug}' does not exist in this environment.`,
      })),
    );
  }
  return found;
}

/** Replaces the role's permissions, records the change; the role as it is now. */
async function setPermissions(tx: Db, scope: Scope, role: RoleRow, slugs: string[]): Promise<Role> {
  const found = await requirePermissions(tx, scope, slugs, 'permissions');
  await replaceRolePermissions(
    tx,
    scope.env.id,
    role.id,
    found.map((p) => p.id),
  );
  await updateRoleRow(tx, role.id, { updatedAt: scope.now() });
  const now = await reread(tx, scope, role);
  await recordRoleEvent(tx, scope, now, 'updated');
  return toRole(now);
}

/** Gives the role one permission; a permission it holds already is a no-op without an event. */
async function addPermission(tx: Db, scope: Scope, role: RoleRow, slug: string): Promise<Role> {
  const [permission] = await requirePermissions(tx, scope, [slug], 'slug');
  if (!permission || !(await addRolePermissionRow(tx, scope.env.id, role.id, permission.id))) return toRole(role);
  await updateRoleRow(tx, role.id, { updatedAt: scope.now() });
  const now = await reread(tx, scope, role);
  await recordRoleEvent(tx, scope, now, 'updated');
  return toRole(now);
}

/** Name and description; absent fields stay, an unchanged role records no event. */
async function updateRole(
  tx: Db,
  scope: Scope,
  role: RoleRow,
  input: { name?: string | undefined; description?: string | null | undefined },
): Promise<Role> {
  const changes: { name?: string; description?: string | null } = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  if (Object.keys(changes).length === 0) return toRole(role);
  await updateRoleRow(tx, role.id, { ...changes, updatedAt: scope.now() });
  const now = await reread(tx, scope, role);
  await recordRoleEvent(tx, scope, now, 'updated');
  return toRole(now);
}

/**
 * A permission's deletion (permissions/reactions.ts): the roles holding it are locked before it
 * goes; once it is gone each records its change.
 */
export async function rolesLosingPermission(tx: Db, scope: Scope, permissionId: string) {
  const held = await lockRolesHolding(tx, permissionId);
  return () => rolesLostPermission(tx, scope, held);
}

/**
 * Records that these roles lost a permission (deleted with it): each role's `updated_at`
 * moves and its `role.updated` / `organization_role.updated` event carries its permissions now.
 */
async function rolesLostPermission(tx: Db, scope: Scope, held: RoleRow[]): Promise<void> {
  for (const role of held) {
    await updateRoleRow(tx, role.id, { updatedAt: scope.now() });
    await recordRoleEvent(tx, scope, await reread(tx, scope, role), 'updated');
  }
}

// Environment roles.

async function lockEnvironmentRole(tx: Db, scope: Scope, slug: string): Promise<RoleRow> {
  return orNotFound(await findRole(tx, scope.env.id, null, slug, 'update'), 'role', slug);
}

export async function createEnvironmentRole(
  scope: Scope,
  input: z.infer<typeof CreateEnvironmentRoleInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) => {
    return addRole(tx, scope, null, input.slug, input);
  });
}

/** Inserts a role (the environment's when `organizationId` is null) and records `role.created`. */
async function addRole(
  tx: Db,
  scope: Scope,
  organizationId: string | null,
  slug: string,
  input: { name: string; description?: string | null | undefined; resource_type_slug?: string | undefined },
): Promise<Role> {
  const now = scope.now();
  const row = await insertRole(tx, scope.deps, {
    id: newId('role'),
    environmentId: scope.env.id,
    organizationId,
    slug,
    name: input.name,
    description: input.description ?? null,
    resourceTypeSlug: input.resource_type_slug ?? 'organization',
    isDefault: false,
    createdAt: now,
    updatedAt: now,
  });
  await recordRoleEvent(tx, scope, row, 'created');
  return toRole(row);
}

export async function listEnvironmentRoles(scope: Scope) {
  return { object: 'list' as const, data: (await environmentRoleRows(scope.db, scope.env.id)).map(toRole) };
}

export async function getEnvironmentRole(scope: Scope, slug: string): Promise<Role> {
  return toRole(orNotFound(await findRole(scope.db, scope.env.id, null, slug), 'role', slug));
}

export async function updateEnvironmentRole(
  scope: Scope,
  input: z.infer<typeof UpdateEnvironmentRoleInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    updateRole(tx, scope, await lockEnvironmentRole(tx, scope, input.slug), input),
  );
}

export async function setEnvironmentRolePermissions(
  scope: Scope,
  input: z.infer<typeof SetEnvironmentRolePermissionsInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    setPermissions(tx, scope, await lockEnvironmentRole(tx, scope, input.role_slug), input.permissions),
  );
}

export async function addEnvironmentRolePermission(
  scope: Scope,
  input: z.infer<typeof AddEnvironmentRolePermissionInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    addPermission(tx, scope, await lockEnvironmentRole(tx, scope, input.role_slug), input.slug),
  );
}

/** The role memberships get when created without one. */
export async function getDefaultRole(scope: Scope): Promise<Role> {
  return toRole(orNotFound(await defaultRole(scope.db, scope.env.id), 'role', 'default'));
}

/** Makes the environment role the default; the previous default stays as an ordinary role. */
export async function setDefaultRole(scope: Scope, slug: string): Promise<Role> {
  return scope.db.transaction(async (tx) => {
    const role = await lockEnvironmentRole(tx, scope, slug);
    if (role.isDefault) return toRole(role);
    await moveDefaultRole(tx, scope.env.id, role.id, scope.now());
    const now = await reread(tx, scope, role);
    await recordRoleEvent(tx, scope, now, 'updated');
    return toRole(now);
  });
}

/**
 * Deletes a role no membership holds. One in use is refused with 409 `role_has_assignments` (reassign
 * its members first), and so is the environment's default role (409 `default_role`).
 */
async function deleteRole(tx: Db, scope: Scope, role: RoleRow): Promise<void> {
  if (role.isDefault) {
    throw conflict(
      'default_role',
      `Role '${role.slug}' is the environment's default role; make another role the default first.`,
    );
  }
  // The role is held FOR UPDATE: an assignment of it in flight has committed (and is counted
  // here), or waits and then finds the role gone (422).
  if (await roleInUse(tx, role.id)) {
    throw conflict(
      'role_has_assignments',
      `Role '${role.slug}' is assigned to organization memberships; assign them another role first.`,
    );
  }
  await deleteRoleRow(tx, role.id);
  await recordRoleEvent(tx, scope, role, 'deleted');
}

export async function deleteEnvironmentRole(scope: Scope, slug: string): Promise<void> {
  await scope.db.transaction(async (tx) => deleteRole(tx, scope, await lockEnvironmentRole(tx, scope, slug)));
}

// Organization roles.

/**
 * A custom role's slug made of its name: `org-` and the name's lower-cased words joined by `-`
 * (accents dropped); undefined when the name has no ASCII letter or digit to make one of.
 */
export function slugOfName(name: string): string | undefined {
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return words === '' ? undefined : `org-${words}`.slice(0, 64).replace(/-+$/, '');
}

/** The organization's own role with this slug, held FOR UPDATE, or 404. */
async function lockOrganizationRole(tx: Db, scope: Scope, organizationId: string, slug: string): Promise<RoleRow> {
  await requireOrganization(tx, scope, organizationId);
  return orNotFound(await findRole(tx, scope.env.id, organizationId, slug, 'update'), 'role', slug);
}

/** The roles that apply in an organization: its own, and the environment's it does not shadow. */
function applicable(rows: RoleRow[]): RoleRow[] {
  const own = new Set(rows.filter((r) => r.organizationId !== null).map((r) => r.slug));
  return rows.filter((r) => r.organizationId !== null || !own.has(r.slug));
}

export async function createOrganizationRole(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationRoleInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) => {
    // NO KEY UPDATE: serialises the creates counted against the organization's roles quota.
    await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowRolesPerOrganization(tx, scope, input.organization_id);
    const slug = input.slug ?? slugOfName(input.name);
    if (slug === undefined) {
      throw invalid([
        { field: 'slug', code: 'slug_required', message: 'slug is required when the name has no letters or digits' },
      ]);
    }
    return addRole(tx, scope, input.organization_id, slug, input);
  });
}

export async function listOrganizationRoles(scope: Scope, organizationId: string) {
  return { object: 'list' as const, data: (await rolesOfOrganization(scope, organizationId)).map(toRole) };
}

/** The role rows that apply in the organization (404 if absent), in priority order, `isDefault` included. */
export async function rolesOfOrganization(scope: Scope, organizationId: string): Promise<RoleRow[]> {
  const rows = await rolesForOrganization(scope.db, scope.env.id, organizationId);
  // No rows: the organization is absent (404), or it is there with no role at all.
  if (rows.length === 0) await requireOrganization(scope.db, scope, organizationId);
  return applicable(rows);
}

/** The organization's own role of this slug, else the environment's. */
export async function getOrganizationRole(scope: Scope, input: z.infer<typeof OrganizationRoleInput>): Promise<Role> {
  await requireOrganization(scope.db, scope, input.organization_id);
  const own = await findRole(scope.db, scope.env.id, input.organization_id, input.slug);
  const row = own ?? (await findRole(scope.db, scope.env.id, null, input.slug));
  return toRole(orNotFound(row, 'role', input.slug));
}

export async function updateOrganizationRole(
  scope: Scope,
  input: z.infer<typeof UpdateOrganizationRoleInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    updateRole(tx, scope, await lockOrganizationRole(tx, scope, input.organization_id, input.slug), input),
  );
}

export async function deleteOrganizationRole(
  scope: Scope,
  input: z.infer<typeof OrganizationRoleInput>,
): Promise<void> {
  await scope.db.transaction(async (tx) =>
    deleteRole(tx, scope, await lockOrganizationRole(tx, scope, input.organization_id, input.slug)),
  );
}

export async function setOrganizationRolePermissions(
  scope: Scope,
  input: z.infer<typeof SetOrganizationRolePermissionsInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    setPermissions(
      tx,
      scope,
      await lockOrganizationRole(tx, scope, input.organization_id, input.role_slug),
      input.permissions,
    ),
  );
}

export async function addOrganizationRolePermission(
  scope: Scope,
  input: z.infer<typeof AddOrganizationRolePermissionInput>,
): Promise<Role> {
  return scope.db.transaction(async (tx) =>
    addPermission(tx, scope, await lockOrganizationRole(tx, scope, input.organization_id, input.role_slug), input.slug),
  );
}

/** Takes a permission from the organization role; one it does not hold is 404. */
export async function removeOrganizationRolePermission(
  scope: Scope,
  input: z.infer<typeof RemoveOrganizationRolePermissionInput>,
): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const role = await lockOrganizationRole(tx, scope, input.organization_id, input.role_slug);
    if (!(await removeRolePermissionRow(tx, role.id, input.permission_slug))) {
      throw notFound('permission', input.permission_slug);
    }
    await updateRoleRow(tx, role.id, { updatedAt: scope.now() });
    await recordRoleEvent(tx, scope, await reread(tx, scope, role), 'updated');
  });
}

// Memberships' roles.

/** What a membership write names: one slug, a list, or neither (the default role). */
export interface RoleSlugs {
  roleSlug?: string | undefined;
  roleSlugs?: string[] | undefined;
}

/** A role resolved for a membership: its id (stored) and slug (shown). */
export interface ResolvedRole {
  id: string;
  slug: string;
}

const unknownRoles = (field: string, slugs: string[]) =>
  invalid(
    slugs.map((slug) => ({
      field,
      code: 'role_not_found',
      message: `Role '${slug}' does not exist for this organization.`,
    })),
  );

/** The refusal of a membership given the default role when the environment has none. */
export const noDefaultRole = () => unknownRoles('role_slug', ['(default)']);

/**
 * The roles a membership of the organization is given, in order: `roleSlug`, or `roleSlugs`
 * (duplicates dropped), or, with neither, the environment's default role. Each slug is the
 * organization's own role, else the environment's; an unknown one is 422 `role_not_found` and
 * both at once 422. The roles are held FOR KEY SHARE until the caller commits, so a concurrent
 * delete of one waits (and then finds it in use).
 */
export async function assertRoleSlugs(
  tx: Db,
  scope: Scope,
  organizationId: string,
  slugs: RoleSlugs,
): Promise<ResolvedRole[]> {
  if (slugs.roleSlug !== undefined && slugs.roleSlugs !== undefined) {
    throw invalid([
      { field: 'role_slugs', code: 'role_slugs_invalid', message: 'Send role_slug or role_slugs, not both.' },
    ]);
  }
  const field = slugs.roleSlugs !== undefined ? 'role_slugs' : 'role_slug';
  const wanted =
    slugs.roleSlugs !== undefined
      ? [...new Set(slugs.roleSlugs)]
      : slugs.roleSlug !== undefined
        ? [slugs.roleSlug]
        : [];
  if (wanted.length === 0) {
    if (slugs.roleSlugs !== undefined) {
      throw invalid([{ field, code: 'role_slugs_invalid', message: 'role_slugs must name at least one role.' }]);
    }
    const fallback = await defaultRole(tx, scope.env.id, 'key share');
    if (!fallback) throw unknownRoles(field, ['(default)']);
    return [{ id: fallback.id, slug: fallback.slug }];
  }
  const rows = await lockRolesNamed(tx, scope.env.id, organizationId, wanted);
  const resolved: ResolvedRole[] = [];
  const missing: string[] = [];
  for (const slug of wanted) {
    const own = rows.find((r) => r.slug === slug && r.organizationId !== null);
    const row = own ?? rows.find((r) => r.slug === slug);
    if (row) resolved.push({ id: row.id, slug });
    else missing.push(slug);
  }
  if (missing.length > 0) throw unknownRoles(field, missing);
  return resolved;
}
