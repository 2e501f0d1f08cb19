// Console sessions: the operator console's cookie (opened with an admin token) and its CSRF
// token; admin procedures accept them in place of an admin token.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { newId } from '@atrium/db';
import type { Deps } from '../kernel/deps.ts';
import { forbidden, unauthorized } from '../kernel/errors.ts';
import { batchedLookupOf } from '../lib/batched-lookup.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { authenticateAdmin } from './admin-token.ts';
import {
  consoleSessionsByHash,
  deleteConsoleSession,
  deleteExpiredConsoleSessions,
  insertConsoleSession,
} from './store.ts';

/** A console sign-in lasts this long (the 12 hours); there is no sliding renewal. */
export const CONSOLE_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const SESSION_SECRET = /^atrium_console_[0-9A-Za-z]{43}$/;

/** The console's two credentials: the session (an HttpOnly cookie) and the CSRF token (a header). */
export interface ConsoleCredentials {
  session: string | undefined;
  csrf: string | undefined;
}

const sessionRefused = () => unauthorized('Unauthorized: sign in to the console again.');

/**
 * The CSRF token of a session: an HMAC of its id under the master key, so it cannot be forged
 * without the key, differs per session, and needs no storage (signed double-submit).
 */
function csrfTokenOf(deps: Deps, sessionId: string): string {
  return createHmac('sha256', deps.tokens.masterKey).update(`console-csrf:${sessionId}`).digest('base64url');
}

/** Exchanges an admin token for a console session; the token itself is not kept anywhere. */
export async function signInToConsole(deps: Deps, adminToken: string) {
  const adminTokenId = await authenticateAdmin(deps, `Bearer ${adminToken}`);
  const now = deps.now();
  const secret = `atrium_console_${randomBase62(43)}`;
  const id = newId('consoleSession');
  const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_TTL_MS);
  await deleteExpiredConsoleSessions(deps.db, now);
  await insertConsoleSession(deps.db, { id, tokenHash: sha256Hex(secret), adminTokenId, createdAt: now, expiresAt });
  return { secret, csrf_token: csrfTokenOf(deps, id), expires_at: expiresAt.toISOString() };
}

type SessionRow = Awaited<ReturnType<typeof consoleSessionsByHash>>[number];

/** A live console session as one request looked it up: its id, its admin token and its end. */
export type ConsoleSession = Pick<SessionRow, 'id' | 'adminTokenId' | 'expiresAt'>;

/**
 * The live session of a cookie's secret (401 when missing, forged, expired or signed out),
 * looked up in batches (lib/batched-lookup.ts): bogus cookies cost at most one connection.
 */
async function sessionOf(deps: Deps, secret: string | undefined) {
  if (!secret || !SESSION_SECRET.test(secret)) throw sessionRefused();
  const lookup = batchedLookupOf<SessionRow>(deps.db, 'console-sessions', async (hashes) => {
    const rows = await consoleSessionsByHash(deps.db, hashes);
    return new Map(rows.map((row) => [row.tokenHash, row]));
  });
  const row = await lookup.get(sha256Hex(secret));
  if (!row || row.expiresAt <= deps.now()) throw sessionRefused();
  return row;
}

/**
 * The console session a cookie's secret opens, without the CSRF check the procedures make: the
 * rate limits count a console call against its session, not its client address, and the call
 * context carries it on so that `authenticateConsole` does not look it up again.
 */
export async function consoleSessionOf(deps: Deps, secret: string | undefined): Promise<ConsoleSession> {
  return sessionOf(deps, secret);
}

/** What the page asks after a reload: its CSRF token and when the session ends. */
export async function describeConsoleSession(deps: Deps, secret: string | undefined) {
  const row = await sessionOf(deps, secret);
  return { csrf_token: csrfTokenOf(deps, row.id), expires_at: row.expiresAt.toISOString() };
}

/**
 * A console call's admin identity: a live session and its CSRF token (403 when missing or
 * wrong). Returns the admin token the session was opened with. `looked` is the session this
 * request's authenticate step looked up already (`consoleSessionOf`, the same cookie), so it is
 * not read twice; without it the session is looked up here.
 */
export async function authenticateConsole(
  deps: Deps,
  credentials: ConsoleCredentials,
  looked?: ConsoleSession,
): Promise<string> {
  const row = looked ?? (await sessionOf(deps, credentials.session));
  const expected = Buffer.from(csrfTokenOf(deps, row.id));
  const given = Buffer.from(credentials.csrf ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw forbidden('csrf_token_invalid', 'Forbidden: the console request is missing its CSRF token or it is wrong.');
  }
  return row.adminTokenId;
}

/** Signs out: the session's row is deleted, so its cookie is worthless from now on. */
export async function signOutOfConsole(deps: Deps, credentials: ConsoleCredentials): Promise<void> {
  await authenticateConsole(deps, credentials);
  await deleteConsoleSession(deps.db, sha256Hex(credentials.session as string));
}
