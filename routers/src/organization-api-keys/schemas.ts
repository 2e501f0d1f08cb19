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

export const ListOrganizationApiKeysInput = ListParams.extend({ organization_id: Id });

export const ApiKeyIdInput = z.object({ id: Id });

export const ValidateApiKeyInput = z.object({ value: z.string().min(1).max(1024) });

/** `api_key` is the key when the value is one of the environment's live keys, else null. */
export const ApiKeyValidation = z.object({ api_key: OrganizationApiKey.nullable() }).meta({ id: 'ApiKeyValidation' });
