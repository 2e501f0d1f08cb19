// The ApiKeys and UserApiKeys widgets (issue #38): the organization's keys and its members' keys,
// in the shapes `@workos-inc/widgets` 1.18 reads (api/endpoint.d.ts), over the one key machinery
// of organization-api-keys/service.ts.
import { iso } from '../../common/schemas.ts';
import { forbidden, invalid } from '../../kernel/errors.ts';
import { envelope, type Listed, type ListParamsInput, pageParams } from '../../kernel/paging.ts';
import { type ClientScope, requirePermission, requireUser } from '../../kernel/principals.ts';
import {
  createOrganizationApiKeyRow,
  createUserApiKeyRow,
  expireKeyOfOrganization,
  type KeyOwner,
  revokeKeyOfOrganization,
} from '../../organization-api-keys/service.ts';
import {
  type OrganizationApiKeyRow,
  pageOfApiKeys,
  pageOfMemberApiKeys,
  type UserApiKeyWithOwnerRow,
} from '../../organization-api-keys/store.ts';
import { membershipPermissionSlugs } from '../../organization-memberships/store.ts';
import type { Permission } from '../../permissions/schemas.ts';
import { listPermissions } from '../../permissions/service.ts';
import { findPermission } from '../../permissions/store.ts';
import { fullName } from '../../user-wire.ts';
import { contactOfUser } from '../../users/store.ts';

/** The ApiKeys widget's scope. */
export const API_KEYS_PERMISSION = 'widgets:api-keys:manage';
/** The UserApiKeys widget: the caller's own keys. */
export const USER_API_KEYS_SELF = 'widgets:user-api-keys:manage-self';
/** The UserApiKeys widget: every member's keys. */
export const USER_API_KEYS_ALL = 'widgets:user-api-keys:manage-all';

/** `ListOrganizationApiKeysResponseData`. */
export interface WidgetApiKey {
  id: string;
  name: string;
  obfuscatedValue: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  permissions: string[];
}

/** `ListUserApiKeysResponseData`: the key and its holder. */
export interface WidgetUserApiKey extends WidgetApiKey {
  owner: {
    type: 'user';
    id: string;
    email: string;
    firstName: string | null;
    lastName: string | null;
    displayName: string;
  };
}

/** `ListOrganizationApiKeyPermission` / `ListUserApiKeyPermission`. */
export interface WidgetKeyPermission {
  id: string;
  slug: string;
  name: string;
  description: string | null;
}

export interface CreateWidgetKeyInput {
  name: string;
  permissions: string[];
  expiresAt?: string | null | undefined;
}

function toWidgetApiKey(row: OrganizationApiKeyRow): WidgetApiKey {
  return {
    id: row.id,
    name: row.name,
    obfuscatedValue: row.obfuscatedValue,
    createdAt: iso(row.createdAt),
    lastUsedAt: row.lastUsedAt ? iso(row.lastUsedAt) : null,
    expiresAt: row.expiresAt ? iso(row.expiresAt) : null,
    permissions: row.permissions,
  };
}

function toWidgetUserApiKey({ key, owner }: UserApiKeyWithOwnerRow): WidgetUserApiKey {
  return {
    ...toWidgetApiKey(key),
    owner: {
      type: 'user',
      id: key.userId ?? '',
      email: owner.email,
      firstName: owner.firstName,
      lastName: owner.lastName,
      displayName: fullName(owner.firstName, owner.lastName) ?? owner.email,
    },
  };
}

const toWidgetPermission = (p: Permission): WidgetKeyPermission => ({
  id: p.id,
  slug: p.slug,
  name: p.name,
  description: p.description,
});

/** A create's `expiresAt`: absent or null is never; otherwise a time still to come (422 naming it). */
function expiryOf(scope: ClientScope, expiresAt: string | null | undefined): Date | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime()) || at <= scope.now()) {
    throw invalid([{ field: 'expiresAt', code: 'expires_at_invalid', message: 'expiresAt must be a time to come' }]);
  }
  return at;
}

/** An expire's `expiresAt`: absent or null is now (the widgets' "expire"); a time is kept as given. */
function expireAt(scope: ClientScope, expiresAt: string | null | undefined): Date {
  if (expiresAt === undefined || expiresAt === null) return scope.now();
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) {
    throw invalid([{ field: 'expiresAt', code: 'expires_at_invalid', message: 'expiresAt must be a date-time' }]);
  }
  return at;
}

const searchOf = (search: string | undefined) => search?.trim() || undefined;

// ---- ApiKeys: the organization's own keys, `widgets:api-keys:manage` ----

export async function listWidgetApiKeys(
  scope: ClientScope,
  params: ListParamsInput,
  search?: string,
): Promise<Listed<WidgetApiKey>> {
  requirePermission(scope, API_KEYS_PERMISSION);
  const owner = { organizationId: scope.client.organizationId, search: searchOf(search) };
  const page = await pageOfApiKeys(scope.db, scope.env.id, owner, pageParams(params));
  return envelope(page, toWidgetApiKey);
}

/** The environment's permissions a key may be given (all of them; the widget offers 100 at most). */
export async function listWidgetApiKeyPermissions(
  scope: ClientScope,
  params: ListParamsInput,
  search?: string,
): Promise<Listed<WidgetKeyPermission>> {
  requirePermission(scope, API_KEYS_PERMISSION);
  const list = await listPermissions(scope, params, searchOf(search));
  return { data: list.data.map(toWidgetPermission), list_metadata: list.list_metadata };
}

/** Creates a key of the organization: each permission must be one the environment defines (422 naming it). */
export async function createWidgetApiKey(scope: ClientScope, input: CreateWidgetKeyInput) {
  requirePermission(scope, API_KEYS_PERMISSION);
  const expiresAt = expiryOf(scope, input.expiresAt);
  const unknown = [];
  for (const slug of new Set(input.permissions)) {
    if (!(await findPermission(scope.db, scope.env.id, slug))) unknown.push(slug);
  }
  if (unknown.length > 0) {
    throw invalid([
      { field: 'permissions', code: 'permission_not_found', message: `unknown permissions: ${unknown.join(', ')}` },
    ]);
  }
  const { key, row } = await createOrganizationApiKeyRow(
    scope,
    { organization_id: scope.client.organizationId, name: input.name, permissions: input.permissions },
    expiresAt,
  );
  const { lastUsedAt: _unused, ...shown } = toWidgetApiKey(row);
  return { ...shown, value: key.value };
}

export async function expireWidgetApiKey(scope: ClientScope, id: string, expiresAt: string | null | undefined) {
  requirePermission(scope, API_KEYS_PERMISSION);
  const row = await expireKeyOfOrganization(
    scope,
    scope.client.organizationId,
    id,
    { type: 'organization' },
    expireAt(scope, expiresAt),
  );
  return toWidgetApiKey(row);
}

export async function deleteWidgetApiKey(scope: ClientScope, id: string): Promise<{ success: true }> {
  requirePermission(scope, API_KEYS_PERMISSION);
  await revokeKeyOfOrganization(scope, scope.client.organizationId, id, { type: 'organization' });
  return { success: true };
}

// ---- UserApiKeys: members' keys, `manage-self` (the caller's) or `manage-all` (everyone's) ----

/**
 * Whose keys the caller may touch: every member's with `manage-all`, their own with
 * `manage-self`; neither is 403. Every UserApiKeys operation needs a user's token.
 */
function userKeyOwner(scope: ClientScope): { userId: string; owner: KeyOwner } {
  const userId = requireUser(scope);
  if (scope.client.permissions.includes(USER_API_KEYS_ALL)) return { userId, owner: { type: 'user' } };
  if (scope.client.permissions.includes(USER_API_KEYS_SELF)) return { userId, owner: { type: 'user', userId } };
  throw forbidden('forbidden', `This token lacks the '${USER_API_KEYS_SELF}' permission.`);
}

export async function listWidgetUserApiKeys(
  scope: ClientScope,
  params: ListParamsInput,
  search?: string,
): Promise<Listed<WidgetUserApiKey>> {
  const { owner } = userKeyOwner(scope);
  const only = owner.type === 'user' ? owner.userId : undefined;
  const page = await pageOfMemberApiKeys(
    scope.db,
    scope.env.id,
    scope.client.organizationId,
    only,
    pageParams(params),
    searchOf(search),
  );
  return envelope(page, toWidgetUserApiKey);
}

/**
 * The permissions the caller holds in the organization now: the most a key of theirs may carry
 * (the widgets' scopes left out).
 */
export async function listWidgetUserApiKeyPermissions(
  scope: ClientScope,
  search?: string,
): Promise<Listed<WidgetKeyPermission>> {
  const { userId } = userKeyOwner(scope);
  const held = await membershipPermissionSlugs(scope.db, scope.env.id, scope.client.organizationId, userId);
  const needle = searchOf(search)?.toLowerCase();
  const data: WidgetKeyPermission[] = [];
  for (const slug of held.sort()) {
    const row = await findPermission(scope.db, scope.env.id, slug);
    // The widgets' own scopes are what the token may do here, not what a key is for.
    if (!row || row.system || row.slug.startsWith('widgets:')) continue;
    if (needle && !`${row.slug} ${row.name}`.toLowerCase().includes(needle)) continue;
    data.push({ id: row.id, slug: row.slug, name: row.name, description: row.description });
  }
  return { data, list_metadata: { before: null, after: null } };
}

/** Creates a key for the caller (never another member), capped at the caller's own permissions. */
export async function createWidgetUserApiKey(scope: ClientScope, input: CreateWidgetKeyInput) {
  const { userId } = userKeyOwner(scope);
  const expiresAt = expiryOf(scope, input.expiresAt);
  const { key, row } = await createUserApiKeyRow(
    scope,
    {
      user_id: userId,
      organization_id: scope.client.organizationId,
      name: input.name,
      permissions: input.permissions,
    },
    expiresAt,
  );
  const { lastUsedAt: _unused, ...shown } = toWidgetApiKey(row);
  return { ...shown, value: key.value };
}

export async function expireWidgetUserApiKey(scope: ClientScope, id: string, expiresAt: string | null | undefined) {
  const { owner } = userKeyOwner(scope);
  const row = await expireKeyOfOrganization(scope, scope.client.organizationId, id, owner, expireAt(scope, expiresAt));
  return toWidgetUserApiKey({ key: row, owner: await contactOfUser(scope.db, row.userId ?? '') });
}

export async function deleteWidgetUserApiKey(scope: ClientScope, id: string): Promise<{ success: true }> {
  const { owner } = userKeyOwner(scope);
  await revokeKeyOfOrganization(scope, scope.client.organizationId, id, owner);
  return { success: true };
}
