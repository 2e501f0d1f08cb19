// Admin tokens (`Authorization: Bearer atrium_admin_...`): the operator's principal on the admin
// surface and the CLI; the console signs in with one (console-session.ts).
import type { Deps } from '../kernel/deps.ts';
import { conflict, notFound, unauthorized } from '../kernel/errors.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { bearer } from './bearer.ts';
import {
  adminTokensByHash,
  allAdminTokens,
  deleteAdminToken,
  hasAdminToken,
  insertAdminToken,
  keepOnlyAdminToken,
} from './store.ts';

/** What an admin token looks like (also the shape ATRIUM_ADMIN_TOKEN must have). */
export const ADMIN_TOKEN = /^atrium_admin_[0-9A-Za-z]{40}$/;

export function newAdminTokenSecret(): string {
  return `atrium_admin_${randomBase62(40)}`;
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
