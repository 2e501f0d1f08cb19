import type { Db } from '@atrium/db';
import type { Deps } from '../kernel/deps.ts';
import { conflict, invalid } from '../kernel/errors.ts';
import type { IdempotencyClaim } from '../kernel/scope.ts';
import { sameDigest, sha256Hex } from '../lib/random.ts';
import {
  countExpired,
  deleteExpired,
  deleteIfExpired,
  deleteInFlight,
  findKey,
  insertClaim,
  markCommitted,
  storeResponse,
  takeOver,
} from './store.ts';

/** How long a first response is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a request holds its key while it runs. A process that dies mid-request leaves the
 * key `in_flight`; after this long a retry may take it over (requests are far shorter: the
 * database's statement timeout is 10 s).
 */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

const KEY = /^[\x21-\x7e]{1,255}$/;

export type IdempotencyBegin = { kind: 'proceed' } | { kind: 'replay'; status: number; body: string };

/** Validates an `Idempotency-Key` header value: 1..255 visible ASCII characters. */
export function requireIdempotencyKey(value: string): string {
  if (!KEY.test(value)) {
    throw invalid([
      {
        field: 'Idempotency-Key',
        code: 'idempotency_key_invalid',
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
      },
    ]);
  }
  return value;
}

/** JSON.stringify's replacer that writes an object's keys in sorted order. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(object).sort()) sorted[key] = object[key];
  return sorted;
}

/**
 * The fingerprint a key is bound to: SHA-256 of the procedure's path and its raw input (keys
 * sorted, so every transport that builds the same input gets the same fingerprint).
 */
export function requestFingerprint(procedurePath: string, rawInput: unknown): string {
  return sha256Hex(`${procedurePath}\n${JSON.stringify(rawInput, sortedKeys) ?? ''}`);
}

const reused = () =>
  conflict('idempotency_key_reused', 'This Idempotency-Key was already used for a different request.');
const lost = () =>
  conflict(
    'idempotency_key_reused',
    'The first request with this Idempotency-Key was carried out, but its response was lost; it will not be run again.',
  );
const inFlight = () =>
  conflict('idempotency_key_reused', 'A request with this Idempotency-Key is still being processed; retry later.');

/**
 * Claims `(environment, key)` for a request, or tells what to do instead: replay the stored
 * first response, or refuse (409 `idempotency_key_reused`) when the key belongs to another
 * request or its first request still runs. One insert on the common path.
 */
export async function beginIdempotentRequest(
  deps: Deps,
  environmentId: string,
  key: string,
  hash: string,
): Promise<IdempotencyBegin> {
  const claim = { environmentId, key };
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.now();
    const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LOCK_MS);
    const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
    if (await insertClaim(deps.db, claim, hash, now, lockedUntil, expiresAt)) return { kind: 'proceed' };

    const row = await findKey(deps.db, claim);
    if (!row) continue; // purged between the two statements: claim again
    if (row.expiresAt <= now) {
      await deleteIfExpired(deps.db, claim, now);
      continue;
    }
    if (!sameDigest(row.requestHash, hash)) throw reused();
    if (row.state === 'completed' && row.responseStatus !== null && row.responseBody !== null) {
      return { kind: 'replay', status: row.responseStatus, body: row.responseBody };
    }
    if (row.lockedUntil > now) throw inFlight();
    if (row.state === 'committed') throw lost();
    // The first request's process died holding the key: take it over, once.
    if (await takeOver(deps.db, claim, now, lockedUntil)) return { kind: 'proceed' };
    throw inFlight();
  }
  throw inFlight();
}

/** Stores the first response of a claimed key, to be replayed until the key expires. */
export async function completeIdempotentRequest(
  deps: Deps,
  claim: IdempotencyClaim,
  status: number,
  body: string,
): Promise<void> {
  await storeResponse(deps.db, claim, status, body, deps.now());
}

/**
 * Frees a claimed key without storing the response (a 5xx: the request may not have run, so
 * a retry with the same key must be allowed to run it). A key whose write committed stays.
 */
export async function releaseIdempotentRequest(deps: Deps, claim: IdempotencyClaim): Promise<void> {
  await deleteInFlight(deps.db, claim);
}

/**
 * The database handle of an idempotent request: each transaction it opens marks the key
 * `committed` as its last statement, so the mark commits exactly when the write does.
 * One-statement writes carry the mark themselves (`writeWithEvent`).
 */
export function markingDb(db: Db, claim: IdempotencyClaim): Db {
  const marking = Object.create(db) as Db;
  marking.transaction = ((run, config) =>
    db.transaction(async (tx) => {
      const result = await run(tx);
      await markCommitted(tx as unknown as Db, claim);
      return result;
    }, config)) as Db['transaction'];
  return marking;
}

/**
 * Deletes expired keys of every environment (a maintenance sweep, run by a server worker);
 * returns how many went.
 */
export function purgeExpiredIdempotencyKeys(deps: Deps): Promise<number> {
  return deleteExpired(deps.db, deps.now());
}

/** How many expired keys wait for the purge (the purge worker's queue depth, for metrics). */
export function countExpiredIdempotencyKeys(deps: Deps): Promise<number> {
  return countExpired(deps.db, deps.now());
}
