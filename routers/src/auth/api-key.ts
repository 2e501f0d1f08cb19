// API keys (`Authorization: Bearer sk_...`): an environment's principal on the REST and tRPC API.

import { liveApiKeysByHash } from '../environments/store.ts';
import { processCache } from '../invalidation/cache.ts';
import type { Deps } from '../kernel/deps.ts';
import { unauthorized } from '../kernel/errors.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { sha256Hex } from '../lib/random.ts';
import { bearer } from './bearer.ts';

const API_KEY = /^sk_(test|live)_[0-9A-Za-z]{40}$/;

type LiveKeyRow = Awaited<ReturnType<typeof liveApiKeysByHash>>[number];

/** This process's batched lookup of live API keys by hash (lib/batched-lookup.ts). */
function liveKeyLookup(deps: Deps) {
  return batchedLookupOf<LiveKeyRow>(deps.db, 'api-keys', async (hashes) => {
    const rows = await liveApiKeysByHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.keyHash, row]));
  });
}

/** A live key's environment and id, as the cache below holds it. */
export interface ApiKeyCaller {
  env: EnvironmentInfo;
  keyId: string;
}

/**
 * This process's resolved API keys by hash. A revocation or a flag change drops its environment's
 * entries in every process through LISTEN/NOTIFY (an `environment` invalidation); while this
 * process does not hear the channel, an entry lives `config.apiKeyCacheTtlMs` at most. Failures are
 * never cached, so it holds at most the live keys (and 100,000 of them), however many bogus ones arrive.
 */
export const apiKeyCache = processCache<ApiKeyCaller>({
  max: 100_000,
  untilNotified: true,
  forget: { environment: (caller, id) => caller.env.id === id },
});

/**
 * Resolves `Authorization: Bearer sk_…` to its environment. Only the SHA-256 of the key is
 * looked up (the key itself is never stored), and kept (`apiKeyCache`). A key shaped like a real
 * one that is not cached is looked up (always: a key made a moment ago by another process is live
 * before its notification arrives), through one batched query in flight per process, so a flood
 * of bogus keys costs at most one database connection, and a real key among them is still served.
 */
export async function authenticateApiKey(deps: Deps, header: string | undefined): Promise<EnvironmentInfo> {
  return (await authenticateApiKeyWithId(deps, header)).env;
}

/** As `authenticateApiKey`, with the key's id too (the rate limits count per key id). */
export async function authenticateApiKeyWithId(deps: Deps, header: string | undefined): Promise<ApiKeyCaller> {
  const secret = bearer(header);
  if (!secret || !API_KEY.test(secret)) throw unauthorized();
  const hash = sha256Hex(secret);
  const caller = await apiKeyCache(deps).resolve(hash, Date.now(), deps.config.apiKeyCacheTtlMs, async () => {
    const row = await liveKeyLookup(deps).get(hash);
    if (!row) return undefined;
    return { env: { id: row.id, name: row.name, clientId: row.clientId, flags: row.flags }, keyId: row.keyId };
  });
  if (!caller) throw unauthorized();
  return caller;
}

/**
 * What the caches and the read replica's read-your-writes name an API-key caller by: the SHA-256
 * of its bearer token (never the token itself).
 */
export function callerKeyOf(header: string | undefined): string {
  return sha256Hex(bearer(header) ?? '');
}
