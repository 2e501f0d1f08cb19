// SCIM bearer tokens (`Authorization: Bearer scim_…`): a directory's identity provider, on the
// SCIM surface only (`/scim/v2/<directory_id>/…`).
import { processCache } from '../invalidation/cache.ts';
import type { Deps } from '../kernel/deps.ts';
import { type DirectoryPrincipal, directoryTokenRefused } from '../kernel/principals.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { sha256Hex } from '../lib/random.ts';
import { bearer } from './bearer.ts';
import { directoriesByTokenHash } from './store.ts';

/** A directory's token as `createDirectory` makes it. */
const DIRECTORY_TOKEN = /^scim_[0-9A-Za-z]{40}$/;

export interface DirectoryCaller {
  env: EnvironmentInfo;
  principal: DirectoryPrincipal;
}

type DirectoryTokenRow = Awaited<ReturnType<typeof directoriesByTokenHash>>[number];

/**
 * This process's resolved SCIM tokens by hash, at most 10,000. A `directory` invalidation (its
 * token rotated, the directory deactivated, deleted or linked: directories/service.ts, sync.ts)
 * drops that directory's entry, an `organization` one (deleted, its directories with it) its
 * organization's, an `environment` one (flags changed) its environment's. An organization deleted
 * in another process is not notified per directory, so the TTL bounds every entry.
 */
const tokenCache = processCache<DirectoryCaller>({
  max: 10_000,
  untilNotified: false,
  forget: {
    directory: (caller, id) => caller.principal.directoryId === id,
    organization: (caller, id) => caller.principal.organizationId === id,
    environment: (caller, id) => caller.env.id === id,
  },
});

/** Is this bearer secret shaped like a SCIM token (so the authenticate step tries it as one)? */
export function isDirectoryToken(secret: string | undefined): boolean {
  return secret !== undefined && DIRECTORY_TOKEN.test(secret);
}

/**
 * Resolves `Authorization: Bearer scim_…` to its directory and environment, by the token's
 * SHA-256 alone (the token is never stored). Resolved tokens are cached for `apiKeyCacheTtlMs`
 * (an initial sync sends thousands of requests with one token), and forgotten sooner: at once in
 * this process and, through LISTEN/NOTIFY, in the others when it is rotated or its directory
 * deactivated or deleted (directories/service.ts), so no process accepts an old token for longer
 * than that bound. Failures are never cached. Uncached tokens go through one batched query in
 * flight per process (lib/batched-lookup.ts), so a flood of bogus tokens costs one connection.
 * When `directoryId` is given (the path's), a token of any other directory is refused the same
 * way as an unknown one: 401, saying nothing of whether the path's directory exists.
 */
export async function authenticateDirectoryToken(
  deps: Deps,
  header: string | undefined,
  directoryId?: string,
): Promise<DirectoryCaller> {
  const secret = bearer(header);
  if (!isDirectoryToken(secret)) throw directoryTokenRefused();
  const hash = sha256Hex(secret as string);
  const caller = await tokenCache(deps).resolve(hash, Date.now(), deps.config.apiKeyCacheTtlMs, () =>
    lookUp(deps, hash),
  );
  if (!caller || (directoryId !== undefined && caller.principal.directoryId !== directoryId)) {
    throw directoryTokenRefused();
  }
  return caller;
}

async function lookUp(deps: Deps, hash: string): Promise<DirectoryCaller | undefined> {
  const lookup = batchedLookupOf<DirectoryTokenRow>(deps.db, 'directory-tokens', async (hashes) => {
    const rows = await directoriesByTokenHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.tokenHash, row]));
  });
  const row = await lookup.get(hash);
  if (!row) return undefined;
  return {
    env: { id: row.id, name: row.name, clientId: row.clientId, flags: row.flags },
    principal: {
      kind: 'directory',
      directoryId: row.directoryId,
      organizationId: row.organizationId,
      state: row.state,
    },
  };
}
