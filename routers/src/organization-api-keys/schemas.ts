import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';

/** An organization API key as the API shows it: never its value, only `obfuscated_value`. */
export const OrganizationApiKey = z
  .object({
    object: z.literal('api_key'),
    id: z.string(),
    owner: z.object({ type: z.literal('organization'), id: z.string() }),
    name: z.string(),
    obfuscated_value: z.string(),
    last_used_at: Timestamp.nullable(),
    permissions: z.array(z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'OrganizationApiKey' });
export type OrganizationApiKey = z.infer<typeof OrganizationApiKey>;

/** The answer to a create: the one time the key's `value` is shown. */
export const CreatedOrganizationApiKey = OrganizationApiKey.extend({ value: z.string() }).meta({
  id: 'CreatedOrganizationApiKey',
});

export const OrganizationApiKeyList = listOf(OrganizationApiKey);

/**
 * A user API key (upstream's `UserApiKey`): held by a member of one organization, its
 * permissions at most theirs. Same key format, hashing and validation as an organization's.
 */
export const UserApiKey = OrganizationApiKey.extend({
  owner: z.object({ type: z.literal('user'), id: z.string(), organization_id: z.string() }),
}).meta({ id: 'UserApiKey' });
export type UserApiKey = z.infer<typeof UserApiKey>;

export const CreatedUserApiKey = UserApiKey.extend({ value: z.string() }).meta({ id: 'UserApiKeyWithValue' });

export const UserApiKeyList = listOf(UserApiKey);

/** Either owner's key, as a validation or a delete reads it. */
export const ApiKey = z.union([OrganizationApiKey, UserApiKey]);
export type ApiKey = z.infer<typeof ApiKey>;

/** A permission slug (upstream's: `posts:read`, `admin`, …): letters, digits, `_ - : .`. */
const PermissionSlug = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_\-:.]*$/, 'a permission slug is letters, digits and _ - : .');

export const CreateOrganizationApiKeyInput = z.object({
  organization_id: Id,
  name: z.string().trim().min(1).max(256),
  permissions: z.array(PermissionSlug).max(100).optional(),
});

export const CreateUserApiKeyInput = z.object({
  user_id: Id,
  name: z.string().trim().min(1).max(256),
  organization_id: Id,
  permissions: z.array(PermissionSlug).max(100).optional(),
});

export const ListUserApiKeysInput = ListParams.extend({ user_id: Id, organization_id: Id.optional() });

export const ListOrganizationApiKeysInput = ListParams.extend({ organization_id: Id });

export const ApiKeyIdInput = z.object({ id: Id });

export const ValidateApiKeyInput = z.object({ value: z.string().min(1).max(1024) });

/**
 * `api_key` is the key when the value is one of the environment's live keys, else null. A user
 * key answers with the permissions its holder still has (see `validateApiKey`).
 */
export const ApiKeyValidation = z.object({ api_key: ApiKey.nullable() }).meta({ id: 'ApiKeyValidation' });
