import { DIRECTORY_STATES, DIRECTORY_TYPES, DIRECTORY_USER_STATES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';
import { RoleReference } from '../organization-memberships/schemas.ts';

/** Upstream's `Directory` (`@workos/openapi-spec`); `domain` and `metadata` are absent unless known. */
export const Directory = z
  .object({
    object: z.literal('directory'),
    id: z.string(),
    organization_id: z.string(),
    external_key: z.string(),
    type: z.enum(DIRECTORY_TYPES),
    state: z.enum(DIRECTORY_STATES),
    name: z.string(),
    domain: z.string().optional(),
    /** Counts of the directory's users (active and not) and groups. */
    metadata: z
      .object({
        users: z.object({ active: z.number().int(), inactive: z.number().int() }),
        groups: z.number().int(),
      })
      .optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Directory' });
export type Directory = z.infer<typeof Directory>;

/** Upstream's `DirectoryGroup`. */
export const DirectoryGroup = z
  .object({
    object: z.literal('directory_group'),
    id: z.string(),
    idp_id: z.string(),
    directory_id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    raw_attributes: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'DirectoryGroup' });
export type DirectoryGroup = z.infer<typeof DirectoryGroup>;

/** Upstream's `DirectoryUserWithGroups` (the deprecated `emails`, `job_title`, `username` included). */
export const DirectoryUser = z
  .object({
    object: z.literal('directory_user'),
    id: z.string(),
    directory_id: z.string(),
    organization_id: z.string(),
    idp_id: z.string(),
    email: z.string().nullable(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    name: z.string().nullable(),
    emails: z.array(
      z.object({ primary: z.boolean().optional(), type: z.string().optional(), value: z.string().nullable() }),
    ),
    job_title: z.string().nullable(),
    username: z.string().nullable(),
    state: z.enum(DIRECTORY_USER_STATES),
    raw_attributes: z.record(z.string(), z.unknown()),
    custom_attributes: z.record(z.string(), z.unknown()),
    role: RoleReference.optional(),
    roles: z.array(RoleReference).optional(),
    groups: z.array(DirectoryGroup),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'DirectoryUser' });
export type DirectoryUser = z.infer<typeof DirectoryUser>;

export const DirectoryIdInput = z.object({ id: Id });

export const ListDirectoriesInput = ListParams.extend({
  organization_id: Id.optional(),
  /** Directories whose name contains this text, in any case. */
  search: z.string().max(256).optional(),
  /** Upstream's deprecated domain filter. */
  domain: z.string().max(256).optional(),
});
export const DirectoryList = listOf(Directory).meta({ id: 'DirectoryList' });

export const ListDirectoryUsersInput = ListParams.extend({ directory: Id.optional(), group: Id.optional() });
export const DirectoryUserList = listOf(DirectoryUser).meta({ id: 'DirectoryUserList' });

export const ListDirectoryGroupsInput = ListParams.extend({ directory: Id.optional(), user: Id.optional() });
export const DirectoryGroupList = listOf(DirectoryGroup).meta({ id: 'DirectoryGroupList' });

/** The operator's create (CLI, console, admin portal): a directory of an organization. */
export const CreateDirectoryInput = z.object({
  organization_id: Id,
  type: z.enum(DIRECTORY_TYPES),
  name: z.string().trim().min(1).max(256),
  domain: z.string().trim().min(1).max(253).optional(),
});

/** A created directory, or one whose token was rotated: the token is shown this once. */
export const DirectoryWithToken = Directory.extend({ scim_base_url: z.string(), bearer_token: z.string() });
export type DirectoryWithToken = z.infer<typeof DirectoryWithToken>;
