import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, primaryKey, smallint, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { organizationMemberships } from './users.ts';

/**
 * Roles: an environment role has no organization; an organization role belongs to one
 * organization and shadows an environment role of the same slug there. Exactly one environment
 * role per environment is the default (the partial unique index), given to memberships created
 * without a role.
 */
// @owner routers/src/roles
export const roles = pgTable(
  'roles',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    resourceTypeSlug: text('resource_type_slug').notNull().default('organization'),
    isDefault: boolean('is_default').notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('roles_environment_slug_unique').on(t.environmentId, t.slug).where(sql`${t.organizationId} is null`),
    uniqueIndex('roles_organization_slug_unique')
      .on(t.organizationId, t.slug)
      .where(sql`${t.organizationId} is not null`),
    uniqueIndex('roles_default_unique').on(t.environmentId).where(sql`${t.isDefault}`),
    index('roles_environment_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);

/** Permissions of an environment, named by slug; roles hold them through `role_permissions`. */
// @owner routers/src/permissions
export const permissions = pgTable(
  'permissions',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    resourceTypeSlug: text('resource_type_slug').notNull().default('organization'),
    system: boolean('system').notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('permissions_environment_slug_unique').on(t.environmentId, t.slug),
    index('permissions_environment_idx').on(t.environmentId, t.id),
  ],
);

/** The permissions of a role; deleting either side removes the link. */
// @owner routers/src/roles
export const rolePermissions = pgTable(
  'role_permissions',
  {
    environmentId: environmentIdColumn(),
    roleId: idText('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    permissionId: idText('permission_id')
      .notNull()
      .references(() => permissions.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'role_permissions_pkey', columns: [t.roleId, t.permissionId] }),
    index('role_permissions_permission_idx').on(t.permissionId),
  ],
);

/**
 * The roles of an organization membership, in order (`position` 0 is its `role`). A role in use
 * cannot be deleted: the service answers 409 and the foreign key (no action) backs it.
 */
// @owner routers/src/roles
export const membershipRoles = pgTable(
  'organization_membership_roles',
  {
    environmentId: environmentIdColumn(),
    organizationMembershipId: idText('organization_membership_id')
      .notNull()
      .references(() => organizationMemberships.id, { onDelete: 'cascade' }),
    roleId: idText('role_id')
      .notNull()
      .references(() => roles.id),
    position: smallint('position').notNull(),
  },
  (t) => [
    primaryKey({ name: 'organization_membership_roles_pkey', columns: [t.organizationMembershipId, t.roleId] }),
    index('organization_membership_roles_role_idx').on(t.roleId),
  ],
);
