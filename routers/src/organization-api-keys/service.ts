import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent, recordEvents } from '../events/record.ts';
import { conflict, invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { membershipOf, membershipPermissionSlugs } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { findUser } from '../users/store.ts';
import type {
  ApiKey,
  CreateOrganizationApiKeyInput,
  CreateUserApiKeyInput,
  ListOrganizationApiKeysInput,
  ListUserApiKeysInput,
  OrganizationApiKey,
  UserApiKey,
  ValidateApiKeyInput,
} from './schemas.ts';
import {
  assertBelowApiKeysQuota,
  deleteApiKeysOfMemberships,
  deleteApiKeysOfUser,
  deleteOrganizationApiKeyRow,
  findByKeyHash,
  insertOrganizationApiKey,
  lockKeyOfOrganization,
  type NewOrganizationApiKey,
  type OrganizationApiKeyRow,
  pageOfApiKeys,
  setKeyExpiry,
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

/** A user key row as the API shows it (upstream's `UserApiKey`). */
export function toUserApiKey(row: OrganizationApiKeyRow): UserApiKey {
  return {
    ...toOrganizationApiKey(row),
    owner: { type: 'user', id: row.userId ?? '', organization_id: row.organizationId },
  };
}

/** Either owner's key in its wire shape. */
export function toApiKey(row: OrganizationApiKeyRow): ApiKey {
  return row.ownerType === 'user' ? toUserApiKey(row) : toOrganizationApiKey(row);
}

/** What a new key is, but for its id, value and instants. */
type KeyOwnerValues = Omit<
  NewOrganizationApiKey,
  'id' | 'environmentId' | 'keyHash' | 'obfuscatedValue' | 'createdAt' | 'updatedAt'
>;

/**
 * Makes a key's value, stores its SHA-256 hash and records `api_key.created` (without the value),
 * inside the caller's transaction; answers the key with its value, this once, and the row.
 */
async function mintApiKey<K extends ApiKey>(
  tx: Db,
  scope: Scope,
  owner: KeyOwnerValues,
  toWire: (row: OrganizationApiKeyRow) => K,
): Promise<{ key: K & { value: string }; row: OrganizationApiKeyRow }> {
  const value = `${VALUE_PREFIX}${randomBase62(40)}`;
  const now = scope.now();
  const row = await insertOrganizationApiKey(
    tx,
    Object.assign(
      {
        id: newId('organizationApiKey'),
        environmentId: scope.env.id,
        keyHash: sha256Hex(value),
        obfuscatedValue: obfuscate(value),
        createdAt: now,
        updatedAt: now,
      },
      owner,
    ),
  );
  const key = toWire(row);
  await recordEvent(tx, scope, 'api_key.created', key, owner.organizationId);
  return { key: { ...key, value }, row };
}

/**
 * Creates a key of the organization (event `api_key.created`, without the value). The value is
 * answered this once; only its SHA-256 hash is stored.
 */
export async function createOrganizationApiKey(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationApiKeyInput>,
  expiresAt: Date | null = null,
): Promise<OrganizationApiKey & { value: string }> {
  return (await createOrganizationApiKeyRow(scope, input, expiresAt)).key;
}

/** `createOrganizationApiKey` with the row as stored (the ApiKeys widget answers its own shape). */
export async function createOrganizationApiKeyRow(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationApiKeyInput>,
  expiresAt: Date | null,
): Promise<{ key: OrganizationApiKey & { value: string }; row: OrganizationApiKeyRow }> {
  const permissions = [...new Set(input.permissions ?? [])];
  return scope.db.transaction(async (tx) => {
    // NO KEY UPDATE on the organization serialises creates counted against its quota.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowApiKeysQuota(tx, scope, { organizationId: organization.id });
    const owner = { organizationId: organization.id, name: input.name, permissions, expiresAt };
    return mintApiKey(tx, scope, owner, toOrganizationApiKey);
  });
}

/** A page of the organization's keys (404 for an organization of another environment). */
export async function listOrganizationApiKeys(scope: Scope, input: z.infer<typeof ListOrganizationApiKeysInput>) {
  const params = pageParams(input);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const page = await pageOfApiKeys(scope.db, scope.env.id, { organizationId: organization.id }, params);
  return asList(page, toOrganizationApiKey);
}

/**
 * Deletes a key of either owner for good (event `api_key.revoked` with the key as it was); later
 * validations find nothing.
 */
export async function deleteOrganizationApiKey(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const row = orNotFound(await deleteOrganizationApiKeyRow(tx, scope.env.id, id), 'api_key', id);
    await recordEvent(tx, scope, 'api_key.revoked', toApiKey(row), row.organizationId);
  });
}

/**
 * Creates a key the user holds in the organization (upstream's user API keys). The user must be
 * an active member; each permission asked for must be one their membership's roles grant now
 * (the ceiling; 422 naming `permissions` otherwise). The membership row is held while the key is
 * made, so a concurrent removal of the member cannot leave a key behind.
 */
export async function createUserApiKey(
  scope: Scope,
  input: z.infer<typeof CreateUserApiKeyInput>,
): Promise<UserApiKey & { value: string }> {
  return (await createUserApiKeyRow(scope, input, null)).key;
}

/** `createUserApiKey` with the row as stored and an expiry (the UserApiKeys widget's). */
export async function createUserApiKeyRow(
  scope: Scope,
  input: z.infer<typeof CreateUserApiKeyInput>,
  expiresAt: Date | null,
): Promise<{ key: UserApiKey & { value: string }; row: OrganizationApiKeyRow }> {
  const permissions = [...new Set(input.permissions ?? [])];
  return scope.db.transaction(async (tx) => {
    const user = await findUser(tx, scope.env.id, input.user_id);
    const organization = await requireOrganization(tx, scope, input.organization_id);
    const membership = await membershipOf(tx, scope.env.id, organization.id, user.id, 'no key update');
    if (membership?.status !== 'active') {
      throw invalid([
        {
          field: 'organization_id',
          code: 'organization_membership_required',
          message: 'the user must be an active member of this organization',
        },
      ]);
    }
    const held = new Set(await membershipPermissionSlugs(tx, scope.env.id, organization.id, user.id));
    const beyond = permissions.filter((slug) => !held.has(slug));
    if (beyond.length > 0) {
      throw invalid([
        {
          field: 'permissions',
          code: 'permission_not_held',
          message: `the user's roles in this organization do not grant: ${beyond.join(', ')}`,
        },
      ]);
    }
    await assertBelowApiKeysQuota(tx, scope, { membershipId: membership.id });
    const owner = {
      organizationId: organization.id,
      ownerType: 'user' as const,
      userId: user.id,
      organizationMembershipId: membership.id,
      name: input.name,
      permissions,
      expiresAt,
    };
    return mintApiKey(tx, scope, owner, toUserApiKey);
  });
}

/** A page of the user's keys, of one organization if asked (404 for an unknown user or organization). */
export async function listUserApiKeys(scope: Scope, input: z.infer<typeof ListUserApiKeysInput>) {
  const params = pageParams(input);
  const user = await findUser(scope.db, scope.env.id, input.user_id);
  const organization =
    input.organization_id === undefined ? undefined : await requireOrganization(scope.db, scope, input.organization_id);
  const page = await pageOfApiKeys(
    scope.db,
    scope.env.id,
    { userId: user.id, organizationId: organization?.id },
    params,
  );
  return asList(page, toUserApiKey);
}

/**
 * Revokes the keys held under these memberships (each `api_key.revoked`), in the caller's
 * transaction: a membership's (or its user's) deletion calls it before the rows go.
 */
export async function revokeApiKeysOfMemberships(tx: Db, scope: Scope, membershipIds: string[]): Promise<void> {
  const rows = await deleteApiKeysOfMemberships(tx, scope.env.id, membershipIds);
  await recordRevoked(tx, scope, rows);
}

/** Revokes every key the user holds, in the caller's transaction (the user's deletion). */
export async function revokeApiKeysOfUser(tx: Db, scope: Scope, userId: string): Promise<void> {
  const rows = await deleteApiKeysOfUser(tx, scope.env.id, userId);
  await recordRevoked(tx, scope, rows);
}

function recordRevoked(tx: Db, scope: Scope, rows: OrganizationApiKeyRow[]) {
  if (rows.length === 0) return Promise.resolve();
  return recordEvents(
    tx,
    scope,
    rows.map((row) => ({ event: 'api_key.revoked', data: toApiKey(row), organizationId: row.organizationId })),
  );
}

/**
 * `POST /api_keys/validations`: the key whose value this is, in the caller's environment, or
 * null (unknown, deleted, expired, malformed, another environment's). A read only: it changes nothing on
 * the key (not even `last_used_at`) and counts against no quota.
 *
 * A user key is checked against its holder as they are now: null while their membership is not
 * active, and its `permissions` are those it was given that the membership's roles still grant
 * (a role that lost a permission, or a member moved to a smaller role, narrows the key at once;
 * a later grant never widens it beyond what it was created with).
 */
export async function validateOrganizationApiKey(
  scope: Scope,
  input: z.infer<typeof ValidateApiKeyInput>,
): Promise<{ api_key: ApiKey | null }> {
  if (!input.value.startsWith(VALUE_PREFIX)) return { api_key: null };
  const row = await findByKeyHash(scope.db, scope.env.id, sha256Hex(input.value));
  if (!row || (row.expiresAt !== null && row.expiresAt <= scope.now())) return { api_key: null };
  if (row.ownerType !== 'user' || row.userId === null) return { api_key: toOrganizationApiKey(row) };
  const membership = await membershipOf(scope.db, scope.env.id, row.organizationId, row.userId);
  if (membership?.status !== 'active') return { api_key: null };
  const held = new Set(await membershipPermissionSlugs(scope.db, scope.env.id, row.organizationId, row.userId));
  return { api_key: toUserApiKey({ ...row, permissions: row.permissions.filter((slug) => held.has(slug)) }) };
}

/** Which keys of an organization a widget may touch: its own, or its members' (of one member if given). */
export type KeyOwner = { type: 'organization' } | { type: 'user'; userId?: string | undefined };

/** Revokes a key of the organization (`api_key.revoked`); 404 for another organization's or owner's. */
export async function revokeKeyOfOrganization(
  scope: Scope,
  organizationId: string,
  id: string,
  owner: KeyOwner,
): Promise<void> {
  await scope.db.transaction(async (tx) => {
    orNotFound(await lockKeyOfOrganization(tx, scope.env.id, organizationId, id, owner), 'api_key', id);
    const row = orNotFound(await deleteOrganizationApiKeyRow(tx, scope.env.id, id), 'api_key', id);
    await recordEvent(tx, scope, 'api_key.revoked', toApiKey(row), row.organizationId);
  });
}

/**
 * Sets when a key of the organization expires (the widgets' "expire"): now or a past time ends it
 * at once, null means never. A key already expired is 409: it stays as it ended.
 */
export async function expireKeyOfOrganization(
  scope: Scope,
  organizationId: string,
  id: string,
  owner: KeyOwner,
  expiresAt: Date | null,
): Promise<OrganizationApiKeyRow> {
  return scope.db.transaction(async (tx) => {
    const row = orNotFound(await lockKeyOfOrganization(tx, scope.env.id, organizationId, id, owner), 'api_key', id);
    const now = scope.now();
    if (row.expiresAt !== null && row.expiresAt <= now) {
      throw conflict('api_key_expired', 'This API key has already expired.');
    }
    return setKeyExpiry(tx, row.id, expiresAt, now);
  });
}
