import { z } from 'zod';
import { ListParams, listOf, Timestamp } from '../common/schemas.ts';

/** Permission slugs: lower-case letters, digits and `_ - : .` (e.g. `posts:read`), at most 128. */
export const PermissionSlug = z
  .string()
  .max(128)
  .regex(
    /^[a-z0-9][a-z0-9_:.-]*$/,
    'must be lower-case letters, digits, and _ - : . (starting with a letter or digit)',
  );

/** A slug named in a path: any text; an unknown one is 404, not 422. */
export const SlugParam = z.string().min(1).max(256);

export const Name = z.string().trim().min(1).max(256);
export const Description = z.string().max(1000);
/** The resource type a role or permission applies to; without resources, `organization`. */
export const ResourceTypeSlug = z
  .string()
  .max(128)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be lower-case letters, digits, _ and -');

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
