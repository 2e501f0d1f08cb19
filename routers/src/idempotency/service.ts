import { type Db, idempotencyKeys } from '@atrium/db';
import { and, count, eq, inArray, lte } from 'drizzle-orm';
import type { Deps, IdempotencyClaim } from '../context.ts';
import { conflict, invalid } from '../errors.ts';
import { sameDigest, sha256Hex } from '../lib/random.ts';

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

/** The fingerprint a key is bound to: SHA-256 of method, path and body. */
export function requestHash(method: string, path: string, body: string): string {
  return sha256Hex(`${method}\n${path}\n${body}`);
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
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.now();
    const claimed = await deps.db
      .insert(idempotencyKeys)
      .values({
        environmentId,
        key,
        requestHash: hash,
        state: 'in_flight',
        lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS),
        createdAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (claimed.length > 0) return { kind: 'proceed' };

    const where = and(eq(idempotencyKeys.environmentId, environmentId), eq(idempotencyKeys.key, key));
    const [row] = await deps.db.select().from(idempotencyKeys).where(where).limit(1);
    if (!row) continue; // purged between the two statements: claim again
    if (row.expiresAt <= now) {
      await deps.db.delete(idempotencyKeys).where(and(where, lte(idempotencyKeys.expiresAt, now)));
      continue;
    }
    if (!sameDigest(row.requestHash, hash)) throw reused();
    if (row.state === 'completed' && row.responseStatus !== null && row.responseBody !== null) {
      return { kind: 'replay', status: row.responseStatus, body: row.responseBody };
    }
    if (row.lockedUntil > now) throw inFlight();
    if (row.state === 'committed') throw lost();
    // The first request's process died holding the key: take it over, once.
    const taken = await deps.db
      .update(idempotencyKeys)
      .set({ lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS) })
      .where(and(where, eq(idempotencyKeys.state, 'in_flight'), lte(idempotencyKeys.lockedUntil, now)))
      .returning({ key: idempotencyKeys.key });
    if (taken.length > 0) return { kind: 'proceed' };
    throw inFlight();
  }
  throw inFlight();
}

/** Stores the first response of a claimed key, to be replayed until the key expires. */
export async function completeIdempotentRequest(
  deps: Deps,
  environmentId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await deps.db
    .update(idempotencyKeys)
    .set({ state: 'completed', responseStatus: status, responseBody: body, lockedUntil: deps.now() })
    .where(
      and(
        eq(idempotencyKeys.environmentId, environmentId),
        eq(idempotencyKeys.key, key),
        inArray(idempotencyKeys.state, ['in_flight', 'committed']),
      ),
    );
}

/**
 * Frees a claimed key without storing the response (a 5xx: the request may not have run, so
 * a retry with the same key must be allowed to run it). A key whose write committed stays.
 */
export async function releaseIdempotentRequest(deps: Deps, environmentId: string, key: string): Promise<void> {
  await deps.db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.environmentId, environmentId),
        eq(idempotencyKeys.key, key),
        eq(idempotencyKeys.state, 'in_flight'),
      ),
    );
}

/**
 * Marks a claimed key `committed` inside the request's write transaction, so the mark and the
 * write commit together.
 */
export async function markIdempotentWrite(tx: Db, claim: IdempotencyClaim): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ state: 'committed' })
    .where(
      and(
        eq(idempotencyKeys.environmentId, claim.environmentId),
        eq(idempotencyKeys.key, claim.key),
        eq(idempotencyKeys.state, 'in_flight'),
      ),
    );
}

/**
 * The database handle of an idempotent request: every transaction it opens marks the key
 * `committed` as its last statement.
 */
export function idempotentDb(db: Db, claim: IdempotencyClaim): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      const transaction = target.transaction.bind(target) as Db['transaction'];
      return ((run, config) =>
        transaction(async (tx) => {
          const result = await run(tx);
          await markIdempotentWrite(tx as unknown as Db, claim);
          return result;
        }, config)) as Db['transaction'];
    },
  });
}

/**
 * Deletes expired keys of every environment (a maintenance sweep, run by a server worker);
 * returns how many went.
 */
export async function purgeExpiredIdempotencyKeys(deps: Deps): Promise<number> {
  const gone = await deps.db
    .delete(idempotencyKeys)
    .where(lte(idempotencyKeys.expiresAt, deps.now()))
    .returning({ key: idempotencyKeys.key });
  return gone.length;
}

/** How many expired keys wait for the purge (the purge worker's queue depth, for metrics). */
export async function countExpiredIdempotencyKeys(deps: Deps): Promise<number> {
  const [row] = await deps.db
    .select({ n: count() })
    .from(idempotencyKeys)
    .where(lte(idempotencyKeys.expiresAt, deps.now()));
  return Number(row?.n ?? 0);
}
