import type { Deps } from '../kernel/deps.ts';
import { conflict, notFound, unauthorized } from '../kernel/errors.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import {
  adminTokensByHash,
  allAdminTokens,
  deleteAdminToken,
  hasAdminToken,
  insertAdminToken,
  keepOnlyAdminToken,
  liveApiKeysByHash,
} from './store.ts';

const API_KEY = /^sk_(test|live)_[0-9A-Za-z]{40}$/;
/** What an admin token looks like (also the shape ATRIUM_ADMIN_TOKEN must have). */
export const ADMIN_TOKEN = /^atrium_admin_[0-9A-Za-z]{40}$/;

export function newApiKeySecret(live = false): string {
  return `sk_${live ? 'live' : 'test'}_${randomBase62(40)}`;
}

export function newAdminTokenSecret(): string {
  return `atrium_admin_${randomBase62(40)}`;
}

export const KEY_PREFIX_LENGTH = 16;

/** The first characters of a key (`sk_test_` and 8 more): enough to name it, never to use it. */
export function keyPrefixOf(secret: string): string {
  return secret.slice(0, KEY_PREFIX_LENGTH);
}

/** The token of `Authorization: Bearer <token>` (scheme in any case, any spacing), else undefined. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

type LiveKeyRow = Awaited<ReturnType<typeof liveApiKeysByHash>>[number];

/** This process's batched lookup of live API keys by hash (lib/batched-lookup.ts). */
function liveKeyLookup(deps: Deps) {
  return batchedLookupOf<LiveKeyRow>(deps.db, 'api-keys', async (hashes) => {
    const rows = await liveApiKeysByHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.keyHash, row]));
  });
}

/**
 * Resolves `Authorization: Bearer sk_…` to its environment. Only the SHA-256 of the key is
 * looked up (the key itself is never stored). Resolved keys are cached: a revocation or a flag
 * change clears the entries of its environment in every process through LISTEN/NOTIFY
 * (invalidation/service.ts); while this process does not hear the channel, an entry lives
 * `config.apiKeyCacheTtlMs` at most. Failures are never cached, so the cache holds at most the
 * live keys, however many bogus ones arrive. A key shaped like a real one that is not cached is
 * looked up (always: a key made a moment ago by another process is live before its notification
 * arrives), through one batched query in flight per process, so a flood of bogus keys costs at
 * most one database connection, and a real key among them is still served.
 */
export async function authenticateApiKey(deps: Deps, header: string | undefined): Promise<EnvironmentInfo> {
  return (await authenticateApiKeyWithId(deps, header)).env;
}

/** As `authenticateApiKey`, with the key's id too (the rate limits count per key id). */
export async function authenticateApiKeyWithId(
  deps: Deps,
  header: string | undefined,
): Promise<{ env: EnvironmentInfo; keyId: string }> {
  const secret = bearer(header);
  if (!secret || !API_KEY.test(secret)) throw unauthorized();
  const hash = sha256Hex(secret);
  const cached = deps.caches.apiKeys.get(hash);
  const nowMs = Date.now();
  const { invalidation } = deps.caches;
  if (cached && (invalidation.listening || cached.expiresAt > nowMs)) return cached;

  const epoch = invalidation.epoch;
  const row = await liveKeyLookup(deps).get(hash);
  if (!row) {
    deps.caches.apiKeys.delete(hash);
    throw unauthorized();
  }
  const env: EnvironmentInfo = { id: row.id, name: row.name, clientId: row.clientId, flags: row.flags };
  const entry = { env, keyId: row.keyId, expiresAt: nowMs + deps.config.apiKeyCacheTtlMs };
  // A notification heard while the row was read may be about it: answer it, cache it not.
  if (invalidation.epoch === epoch) deps.caches.apiKeys.set(hash, entry);
  return entry;
}

/**
 * Forgets every cached key of an environment (after a revocation or a flag change), and what
 * other caches of this process hold about it (the `environment` invalidation handlers).
 */
export function forgetEnvironment(deps: Deps, environmentId: string): void {
  for (const [hash, entry] of deps.caches.apiKeys) {
    if (entry.env.id === environmentId) deps.caches.apiKeys.delete(hash);
  }
  for (const handler of deps.caches.invalidation.handlers.get('environment') ?? []) handler(environmentId);
}

/**
 * Resolves an admin token to its id (the CLI's `admin-tokens list` marks the caller's own).
 * Admin tokens are not cached (a revocation holds at once everywhere); they are looked up in
 * batches as API keys are, so bogus ones cost at most one connection.
 */
export async function authenticateAdmin(deps: Deps, header: string | undefined): Promise<string> {
  const secret = bearer(header);
  if (!secret || !ADMIN_TOKEN.test(secret)) throw unauthorized('Unauthorized: a valid admin token is required.');
  const lookup = batchedLookupOf<string>(deps.db, 'admin-tokens', async (hashes) => {
    const rows = await adminTokensByHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.tokenHash, row.id]));
  });
  const id = await lookup.get(sha256Hex(secret));
  if (!id) throw unauthorized('Unauthorized: a valid admin token is required.');
  return id;
}

function checkAdminTokenShape(token: string): void {
  if (!ADMIN_TOKEN.test(token)) {
    throw new Error('ATRIUM_ADMIN_TOKEN must look like atrium_admin_ followed by 40 letters or digits.');
  }
}

/** Registers a known admin token by its hash (idempotent); the other admin tokens stay valid. */
export async function ensureAdminToken(deps: Deps, token: string): Promise<void> {
  checkAdminTokenShape(token);
  await insertAdminToken(deps.db, sha256Hex(token));
}

/**
 * ATRIUM_ADMIN_TOKEN at start-up becomes the only admin token: every other one (an earlier
 * configured token, one generated on the first start or made with `atrium admin-tokens create`)
 * is deleted, so changing the variable and restarting retires the old token.
 */
export async function configureAdminToken(deps: Deps, configured: string): Promise<{ revoked: number }> {
  checkAdminTokenShape(configured);
  return { revoked: await keepOnlyAdminToken(deps.db, sha256Hex(configured)) };
}

/**
 * The first start's admin token, when ATRIUM_ADMIN_TOKEN is not set and there is none yet:
 * returned once, to be printed; only its hash is kept. The caller serialises first starts.
 */
export async function generateFirstAdminToken(deps: Deps): Promise<string | undefined> {
  if (await hasAdminToken(deps.db)) return undefined;
  const token = newAdminTokenSecret();
  await insertAdminToken(deps.db, sha256Hex(token));
  return token;
}

/** A new admin token (`atrium admin-tokens create`): its secret is returned once, only its hash is kept. */
export async function createAdminToken(deps: Deps): Promise<{ id: string; token: string; created_at: string }> {
  const token = newAdminTokenSecret();
  const row = await insertAdminToken(deps.db, sha256Hex(token));
  if (!row) throw new Error('admin token insert returned no row');
  return { id: row.id, token, created_at: row.createdAt.toISOString() };
}

/** Every admin token by id, oldest first; `current` marks the one making the request. */
export async function listAdminTokens(deps: Deps, callerId: string) {
  const rows = await allAdminTokens(deps.db);
  return rows.map((row) => ({ id: row.id, created_at: row.createdAt.toISOString(), current: row.id === callerId }));
}

/**
 * Deletes an admin token, at once for every process (admin tokens are not cached). The token
 * making the request is refused (409): revoking it would lock the caller out, so an operator
 * rotates by creating a new token and revoking the old one with the new.
 */
export async function revokeAdminToken(deps: Deps, id: string, callerId: string) {
  if (id === callerId) {
    throw conflict(
      'admin_token_in_use',
      'This is the admin token making the request; revoke it with another admin token (atrium admin-tokens create).',
    );
  }
  if (!(await deleteAdminToken(deps.db, id))) throw notFound('admin_token', id);
  return { id, revoked: true };
}
