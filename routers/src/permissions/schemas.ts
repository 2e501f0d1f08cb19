import { z } from 'zod';
import { ListParams, listOf, Timestamp } from '../common/schemas.ts';
import { Description, Name, PermissionSlug, ResourceTypeSlug, SlugParam } from '../roles/schemas.ts';

/** Upstream's permission object (the SDK's `PermissionResponse`). */
export const Permission = z
  .object({
    object: z.literal('permission'),
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    resource_type_slug: z.string(),
    system: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Permission' });
export type Permission = z.infer<typeof Permission>;

export const PermissionList = listOf(Permission);

export const CreatePermissionInput = z.object({
  slug: PermissionSlug,
  name: Name,
  description: Description.nullish(),
  resource_type_slug: ResourceTypeSlug.optional(),
});

export const PermissionSlugInput = z.object({ slug: SlugParam });

/** Absent fields stay unchanged; `description: null` clears it. */
export const UpdatePermissionInput = z.object({
  slug: SlugParam,
  name: Name.optional(),
  description: Description.nullish(),
});

export const ListPermissionsInput = ListParams;
