import { MEMBERSHIP_STATUSES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, QueryList, Timestamp } from '../common/schemas.ts';

/** The specification's organization membership object (also upstream's). */
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
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'OrganizationMembership' });
export type OrganizationMembership = z.infer<typeof OrganizationMembership>;

export const OrganizationMembershipList = listOf(OrganizationMembership);

export const OrganizationMembershipIdInput = z.object({ id: Id });

export const CreateOrganizationMembershipInput = z.object({
  user_id: Id,
  organization_id: Id,
});

/** `statuses` may be repeated, sent as `statuses[]`, or comma-separated (the Node SDK's way). */
export const ListOrganizationMembershipsInput = ListParams.extend({
  user_id: Id.optional(),
  organization_id: Id.optional(),
  statuses: QueryList.pipe(z.array(z.enum(MEMBERSHIP_STATUSES)).optional()),
});
