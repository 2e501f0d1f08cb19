// API keys (`Authorization: Bearer sk_...`): an environment's principal on the REST and tRPC API.
import type { Deps } from '../kernel/deps.ts';
import { unauthorized } from '../kernel/errors.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { bearer } from './bearer.ts';
import { liveApiKeysByHash } from './store.ts';

const API_KEY = /^sk_(test|live)_[0-9A-Za-z]{40}$/;

export function newApiKeySecret(live = false): string {
  return `sk_${live ? 'live' : 'test'}_${randomBase62(40)}`;
}

export const KEY_PREFIX_LENGTH = 16;

/** The first characters of a key (`sk_test_` and 8 more): enough to name it, never to use it. */
export function keyPrefixOf(secret: string): string {
  return secret.slice(0, KEY_PREFIX_LENGTH);
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
 * What the caches and the read replica's read-your-writes name an API-key caller by: the SHA-256
 * of its bearer token (never the token itself).
 */
export function callerKeyOf(header: string | undefined): string {
  return sha256Hex(bearer(header) ?? '');
}
