import { MEMBERSHIP_STATUSES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, QueryList, StrictBoolean, Timestamp } from '../common/schemas.ts';
import { User } from '../user-wire.ts';

/** A membership's role as the SDK reads it (`RoleResponse`). */
export const RoleReference = z.object({ slug: z.string() });

/** A role slug a membership write names: an unknown one is 422 `role_not_found`, not a format error. */
const RoleSlugRef = z.string().min(1).max(256);

/** The specification's organization membership object (also upstream's, with `role` and `roles`). */
export const OrganizationMembership = z
  .object({
    object: z.literal('organization_membership'),
    id: z.string(),
    user_id: z.string(),
    organization_id: z.string(),
    organization_name: z.string(),
    status: z.enum(MEMBERSHIP_STATUSES),
    directory_managed: z.boolean(),
    custom_attributes: z.record(z.string(), z.string()),
    /** The primary role (the first of `roles`). */
    role: RoleReference,
    roles: z.array(RoleReference),
    created_at: Timestamp,
    updated_at: Timestamp,
    /** The member, as the users API answers it (upstream embeds it in every membership answer). */
    user: User,
  })
  .meta({ id: 'OrganizationMembership' });
export type OrganizationMembership = z.infer<typeof OrganizationMembership>;

export const OrganizationMembershipList = listOf(OrganizationMembership);

export const OrganizationMembershipIdInput = z.object({ id: Id });

/** Without `role_slug` or `role_slugs`, the environment's default role; both at once is 422. */
export const CreateOrganizationMembershipInput = z.object({
  user_id: Id,
  organization_id: Id,
  role_slug: RoleSlugRef.optional(),
  role_slugs: z.array(RoleSlugRef).max(20).optional(),
  /** Atrium's own: marks a membership as managed by a directory (upstream's directory sync sets it). */
  directory_managed: StrictBoolean.optional(),
});

/** `updateOrganizationMembership`: the roles to hold from now on (one of the two). */
export const UpdateOrganizationMembershipInput = z.object({
  id: Id,
  role_slug: RoleSlugRef.optional(),
  role_slugs: z.array(RoleSlugRef).max(20).optional(),
});

/** `statuses` may be repeated, sent as `statuses[]`, or comma-separated (the Node SDK's way). */
export const ListOrganizationMembershipsInput = ListParams.extend({
  user_id: Id.optional(),
  organization_id: Id.optional(),
  statuses: QueryList.pipe(z.array(z.enum(MEMBERSHIP_STATUSES)).optional()),
});
