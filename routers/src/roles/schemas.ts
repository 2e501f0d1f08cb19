import { z } from 'zod';
import { Id, Timestamp } from '../common/schemas.ts';
import { Description, Name, PermissionSlug, ResourceTypeSlug, SlugParam } from '../permissions/schemas.ts';

export const ROLE_TYPES = ['EnvironmentRole', 'OrganizationRole'] as const;

/** Upstream's role object (the SDK's `EnvironmentRoleResponse` / `OrganizationRoleResponse`). */
export const Role = z
  .object({
    object: z.literal('role'),
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    permissions: z.array(z.string()),
    resource_type_slug: z.string(),
    type: z.enum(ROLE_TYPES),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Role' });
export type Role = z.infer<typeof Role>;

/** Role lists are read whole, in priority (creation) order: no pages (quota-bounded). */
export const RoleList = z.object({ object: z.literal('list'), data: z.array(Role) }).meta({ id: 'RoleList' });

/** The contract's role slugs: `^[a-z0-9][a-z0-9_-]{0,63}$`, unique per environment (or organization). */
export const RoleSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,63}$/,
    'must be 1..64 lower-case letters, digits, _ and - (starting with a letter or digit)',
  );

/** The permission slugs a role is given (each must exist in the environment). */
const PermissionSlugs = z.array(z.string().min(1).max(128)).max(1000);

export const CreateEnvironmentRoleInput = z.object({
  slug: RoleSlug,
  name: Name,
  description: Description.nullish(),
  resource_type_slug: ResourceTypeSlug.optional(),
});

export const RoleSlugInput = z.object({ slug: SlugParam });

/** Absent fields stay unchanged; `description: null` clears it. */
export const UpdateEnvironmentRoleInput = z.object({
  slug: SlugParam,
  name: Name.optional(),
  description: Description.nullish(),
});

/** The role is `role_slug` in these paths: the body's `slug` names the permission (the SDK's body). */
export const SetEnvironmentRolePermissionsInput = z.object({ role_slug: SlugParam, permissions: PermissionSlugs });
export const AddEnvironmentRolePermissionInput = z.object({ role_slug: SlugParam, slug: PermissionSlug });

export const SetDefaultRoleInput = z.object({ slug: SlugParam });

const OrganizationPath = { organization_id: Id };

export const OrganizationRolesInput = z.object(OrganizationPath);

/** Without a slug, one is made of the name: `org-` and its lower-cased words joined by `-`. */
export const CreateOrganizationRoleInput = z.object({
  ...OrganizationPath,
  slug: RoleSlug.optional(),
  name: Name,
  description: Description.nullish(),
  resource_type_slug: ResourceTypeSlug.optional(),
});

export const OrganizationRoleInput = z.object({ ...OrganizationPath, slug: SlugParam });

export const UpdateOrganizationRoleInput = z.object({
  ...OrganizationPath,
  slug: SlugParam,
  name: Name.optional(),
  description: Description.nullish(),
});

export const SetOrganizationRolePermissionsInput = z.object({
  ...OrganizationPath,
  role_slug: SlugParam,
  permissions: PermissionSlugs,
});
export const AddOrganizationRolePermissionInput = z.object({
  ...OrganizationPath,
  role_slug: SlugParam,
  slug: PermissionSlug,
});
export const RemoveOrganizationRolePermissionInput = z.object({
  ...OrganizationPath,
  role_slug: SlugParam,
  permission_slug: SlugParam,
});

/** `role.*` event data (the SDK's `RoleEventResponse`). */
export interface RoleEvent {
  object: 'role';
  slug: string;
  resource_type_slug: string;
  permissions: string[];
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** `organization_role.*` event data (the SDK's `OrganizationRoleEventResponse`). */
export interface OrganizationRoleEvent {
  object: 'organization_role';
  organization_id: string;
  slug: string;
  name: string;
  description: string | null;
  resource_type_slug: string;
  permissions: string[];
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}
