// SCIM bearer tokens (`Authorization: Bearer scim_…`): a directory's identity provider, on the
// SCIM surface only (`/scim/v2/<directory_id>/…`).
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

/** Is this bearer secret shaped like a SCIM token (so the authenticate step tries it as one)? */
export function isDirectoryToken(secret: string | undefined): boolean {
  return secret !== undefined && DIRECTORY_TOKEN.test(secret);
}

/**
 * Resolves `Authorization: Bearer scim_…` to its directory and environment, by the token's
 * SHA-256 alone (the token is never stored). Not cached: one probe of a unique index per request
 * keeps a rotation effective at once in every process. Lookups go through one batched query in
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
  const lookup = batchedLookupOf<DirectoryTokenRow>(deps.db, 'directory-tokens', async (hashes) => {
    const rows = await directoriesByTokenHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.tokenHash, row]));
  });
  const row = await lookup.get(sha256Hex(secret as string));
  if (!row || (directoryId !== undefined && row.directoryId !== directoryId)) throw directoryTokenRefused();
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
