import { type Db, type FeatureFlags, newId } from '@atrium/db';
import { forgetLocally, publishInvalidation } from '../invalidation/service.ts';
import type { Deps } from '../kernel/deps.ts';
import { conflict, invalid, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { environmentCreated } from './reactions.ts';
import {
  allEnvironments,
  apiKeysOf,
  type EnvironmentRow,
  environmentsNamed,
  insertApiKey,
  insertEnvironment,
  type NewApiKey,
  revokeLiveApiKey,
  setFlags,
} from './store.ts';

/** A new API key's secret (`Authorization: Bearer sk_...`, auth/api-key.ts checks its shape). */
export function newApiKeySecret(live = false): string {
  return `sk_${live ? 'live' : 'test'}_${randomBase62(40)}`;
}

export const KEY_PREFIX_LENGTH = 16;

/** The first characters of a key (`sk_test_` and 8 more): enough to name it, never to use it. */
export function keyPrefixOf(secret: string): string {
  return secret.slice(0, KEY_PREFIX_LENGTH);
}

/**
 * Forgets what this process caches about an environment now (after a revocation or a flag
 * change): its API keys and the rest of the `environment` invalidation's handlers.
 */
export function forgetEnvironment(deps: Deps, environmentId: string): void {
  forgetLocally(deps, 'environment', environmentId);
}

export const KNOWN_FLAGS = ['groups', 'agents'] as const;
export const DEFAULT_FLAGS: FeatureFlags = { groups: true, agents: true };

/** An environment is named by its id or, when unambiguous, by its name. */
export async function resolveEnvironment(db: Db, ref: string): Promise<EnvironmentRow> {
  const rows = await environmentsNamed(db, ref);
  const exact = rows.find((row) => row.id === ref);
  if (exact) return exact;
  if (rows.length !== 1 || !rows[0]) throw notFound('environment', ref);
  return rows[0];
}

/** A service Scope for an environment named by an operator (admin procedures). */
export async function scopeOf(deps: Deps, ref: string, now: () => Date = deps.now): Promise<Scope> {
  const row = await resolveEnvironment(deps.db, ref);
  return {
    db: deps.db,
    env: { id: row.id, name: row.name, clientId: row.clientId, flags: row.flags },
    now,
    deps,
  };
}

/** A new API key of the environment: the secret (shown once) and the row that keeps its hash. */
function newApiKey(environmentId: string, live: boolean): { secret: string; row: NewApiKey } {
  const secret = newApiKeySecret(live);
  const row = { id: newId('apiKey'), environmentId, keyHash: sha256Hex(secret), keyPrefix: keyPrefixOf(secret), live };
  return { secret, row };
}

export async function createEnvironment(
  deps: Deps,
  input: { name: string; flags?: FeatureFlags | undefined },
): Promise<{ environment_id: string; client_id: string; api_key: string }> {
  const now = deps.now();
  const id = newId('environment');
  const clientId = newId('client');
  const apiKey = newApiKey(id, false);
  // The environment, its first key and what other resources start it with (its roles: app-router.ts) together.
  await deps.db.transaction(async (tx) => {
    await insertEnvironment(
      tx,
      {
        id,
        name: input.name,
        clientId,
        flags: Object.assign({}, DEFAULT_FLAGS, input.flags),
        createdAt: now,
        updatedAt: now,
      },
      apiKey.row,
    );
    await environmentCreated(tx, id, now);
  });
  return { environment_id: id, client_id: clientId, api_key: apiKey.secret };
}

export async function listEnvironments(deps: Deps) {
  const rows = await allEnvironments(deps.db);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    client_id: row.clientId,
    flags: row.flags,
    created_at: row.createdAt.toISOString(),
  }));
}

/** A new API key; the admin CLI lists every key of an environment, so at most the quota, revoked ones included. */
export async function createApiKey(deps: Deps, input: { environment: string; live?: boolean | undefined }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  const apiKey = newApiKey(env.id, input.live ?? false);
  await insertApiKey(deps.db, deps, apiKey.row);
  return { environment_id: env.id, api_key: apiKey.secret, key_prefix: keyPrefixOf(apiKey.secret) };
}

export async function listApiKeys(deps: Deps, input: { environment: string }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  const rows = await apiKeysOf(deps.db, env.id);
  return rows.map((row) => ({
    id: row.id,
    key_prefix: row.keyPrefix,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  }));
}

/**
 * Revokes one live key of the environment, named by its id or by its prefix: the prefix
 * `api-keys list` shows (KEY_PREFIX_LENGTH characters) or more, up to the whole key. A shorter
 * prefix is refused (422), and so is a prefix that more than one key shares (409: revoke by id).
 */
export async function revokeApiKey(
  deps: Deps,
  input: { environment: string; id?: string | undefined; key_prefix?: string | undefined },
) {
  if ((input.id === undefined) === (input.key_prefix === undefined)) {
    throw invalid([
      { field: 'id', code: 'id_or_key_prefix_required', message: 'Pass exactly one of id or key_prefix.' },
    ]);
  }
  if (input.key_prefix !== undefined && input.key_prefix.length < KEY_PREFIX_LENGTH) {
    throw invalid([
      {
        field: 'key_prefix',
        code: 'key_prefix_too_short',
        message: `key_prefix must be at least ${KEY_PREFIX_LENGTH} characters (the prefix api-keys list shows), or revoke by id.`,
      },
    ]);
  }
  const env = await resolveEnvironment(deps.db, input.environment);
  const match =
    input.id !== undefined ? { id: input.id } : { keyPrefix: (input.key_prefix as string).slice(0, KEY_PREFIX_LENGTH) };
  // The notification leaves with the revocation's commit: every process forgets the key.
  const { matched, revoked } = await deps.db.transaction(async (tx) => {
    const result = await revokeLiveApiKey(tx, env.id, match, deps.now());
    if (result.revoked) await publishInvalidation(tx, 'environment', env.id);
    return result;
  });
  if (matched > 1) {
    throw conflict(
      'ambiguous_key_prefix',
      `${matched} API keys match the prefix '${input.key_prefix}'; revoke one by id (api-keys list shows ids).`,
    );
  }
  if (!revoked) throw notFound('api_key', input.id ?? (input.key_prefix as string));
  forgetEnvironment(deps, env.id);
  return {
    environment_id: env.id,
    id: revoked.id,
    key_prefix: revoked.keyPrefix,
    revoked_at: revoked.revokedAt?.toISOString() ?? null,
  };
}

export async function setFlag(deps: Deps, input: { environment: string; flag: string; enabled: boolean }) {
  if (!(KNOWN_FLAGS as readonly string[]).includes(input.flag)) {
    throw invalid([
      {
        field: 'flag',
        code: 'unknown_flag',
        message: `Unknown flag '${input.flag}'; the flags are: ${KNOWN_FLAGS.join(', ')}.`,
      },
    ]);
  }
  const env = await resolveEnvironment(deps.db, input.environment);
  const flags = { ...env.flags, [input.flag]: input.enabled };
  await deps.db.transaction(async (tx) => {
    await setFlags(tx, env.id, flags, deps.now());
    await publishInvalidation(tx, 'environment', env.id);
  });
  forgetEnvironment(deps, env.id);
  return { environment_id: env.id, flags };
}
