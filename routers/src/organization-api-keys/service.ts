import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent } from '../events/record.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';
import type {
  CreateOrganizationApiKeyInput,
  ListOrganizationApiKeysInput,
  OrganizationApiKey,
  ValidateApiKeyInput,
} from './schemas.ts';
import {
  deleteOrganizationApiKeyRow,
  findByKeyHash,
  insertOrganizationApiKey,
  type OrganizationApiKeyRow,
  pageOfOrganizationApiKeys,
} from './store.ts';

/** Values look like `sk_org_<40 base62>`: never an environment key (`sk_test_`, `sk_live_`). */
const VALUE_PREFIX = 'sk_org_';

/** What may be shown of a value again: its prefix and last four characters. */
const obfuscate = (value: string) => `${VALUE_PREFIX}…${value.slice(-4)}`;

/** The single place that turns a key row into its wire shape. */
export function toOrganizationApiKey(row: OrganizationApiKeyRow): OrganizationApiKey {
  return {
    object: 'api_key',
    id: row.id,
    owner: { type: 'organization', id: row.organizationId },
    name: row.name,
    obfuscated_value: row.obfuscatedValue,
    last_used_at: row.lastUsedAt ? iso(row.lastUsedAt) : null,
    permissions: row.permissions,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/**
 * Creates a key of the organization (event `api_key.created`, without the value). The value is
 * answered this once; only its SHA-256 hash is stored.
 */
export async function createOrganizationApiKey(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationApiKeyInput>,
): Promise<OrganizationApiKey & { value: string }> {
  const permissions = [...new Set(input.permissions ?? [])];
  return scope.db.transaction(async (tx) => {
    // NO KEY UPDATE on the organization serialises creates counted against its quota.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowParentQuota(tx, scope, 'organizationApiKeysPerOrganization', organization.id);
    const value = `${VALUE_PREFIX}${randomBase62(40)}`;
    const now = scope.now();
    const row = await insertOrganizationApiKey(tx, {
      id: newId('organizationApiKey'),
      environmentId: scope.env.id,
      organizationId: organization.id,
      name: input.name,
      keyHash: sha256Hex(value),
      obfuscatedValue: obfuscate(value),
      permissions,
      createdAt: now,
      updatedAt: now,
    });
    const key = toOrganizationApiKey(row);
    await recordEvent(tx, scope, 'api_key.created', key, organization.id);
    return { ...key, value };
  });
}

/** A page of the organization's keys (404 for an organization of another environment). */
export async function listOrganizationApiKeys(scope: Scope, input: z.infer<typeof ListOrganizationApiKeysInput>) {
  const params = pageParams(input);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const page = await pageOfOrganizationApiKeys(scope.db, scope.env.id, organization.id, params);
  return asList(page, toOrganizationApiKey);
}

/** Deletes a key for good (event `api_key.revoked` with the key as it was); later validations find nothing. */
export async function deleteOrganizationApiKey(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const row = orNotFound(await deleteOrganizationApiKeyRow(tx, scope.env.id, id), 'api_key', id);
    await recordEvent(tx, scope, 'api_key.revoked', toOrganizationApiKey(row), row.organizationId);
  });
}

/**
 * `POST /api_keys/validations`: the key whose value this is, in the caller's environment, or
 * null (unknown, deleted, malformed, another environment's). A read only: it changes nothing on
 * the key (not even `last_used_at`) and counts against no quota.
 */
export async function validateOrganizationApiKey(scope: Scope, input: z.infer<typeof ValidateApiKeyInput>) {
  if (!input.value.startsWith(VALUE_PREFIX)) return { api_key: null };
  const row = await findByKeyHash(scope.db, scope.env.id, sha256Hex(input.value));
  return { api_key: row ? toOrganizationApiKey(row) : null };
}
