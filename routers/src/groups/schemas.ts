import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';

export const Group = z
  .object({
    object: z.literal('group'),
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Group' });
export type Group = z.infer<typeof Group>;

export const GroupList = listOf(Group);

/** Upstream's limits: a name of 1..256 characters, a description of at most 150 (or null). */
const Name = z.string().trim().min(1).max(256);
const Description = z.string().max(150);

/** Path parameters of a group: it is reached only through its organization. */
const GroupPath = { organization_id: Id, group_id: Id };

export const ListGroupsInput = ListParams.extend({ organization_id: Id });

export const CreateGroupInput = z.object({
  organization_id: Id,
  name: Name,
  description: Description.nullish(),
});

export const GroupPathInput = z.object(GroupPath);

/** Absent fields stay unchanged; `description: null` clears the description. */
export const UpdateGroupInput = z.object({
  ...GroupPath,
  name: Name.optional(),
  description: Description.nullish(),
});

export const ListGroupMembershipsInput = ListParams.extend(GroupPath);

export const GroupMembershipInput = z.object({ ...GroupPath, organization_membership_id: Id });

export const ListMembershipGroupsInput = ListParams.extend({ id: Id });
