import { type Db, idempotencyKeys } from '@atrium/db';
import { and, count, eq, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { IdempotencyClaim } from '../kernel/scope.ts';

/** Every query of the idempotency keys; the rules that use them are in service.ts. */

const keyOf = (environmentId: string, key: string) =>
  and(eq(idempotencyKeys.environmentId, environmentId), eq(idempotencyKeys.key, key));

export type KeyRow = typeof idempotencyKeys.$inferSelect;

/** Inserts an `in_flight` row for the key; false when the key already has one. */
export async function insertClaim(
  db: Db,
  claim: IdempotencyClaim,
  hash: string,
  now: Date,
  lockedUntil: Date,
  expiresAt: Date,
): Promise<boolean> {
  const claimed = await db
    .insert(idempotencyKeys)
    .values({
      environmentId: claim.environmentId,
      key: claim.key,
      requestHash: hash,
      state: 'in_flight',
      lockedUntil,
      createdAt: now,
      expiresAt,
    })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  return claimed.length > 0;
}

export async function findKey(db: Db, claim: IdempotencyClaim): Promise<KeyRow | undefined> {
  const [row] = await db.select().from(idempotencyKeys).where(keyOf(claim.environmentId, claim.key)).limit(1);
  return row;
}

/** Deletes the key if it has expired by `now`. */
export async function deleteIfExpired(db: Db, claim: IdempotencyClaim, now: Date): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(and(keyOf(claim.environmentId, claim.key), lte(idempotencyKeys.expiresAt, now)));
}

/** Takes over an `in_flight` key whose holder's lock ran out; false when another request won it. */
export async function takeOver(db: Db, claim: IdempotencyClaim, now: Date, lockedUntil: Date): Promise<boolean> {
  const taken = await db
    .update(idempotencyKeys)
    .set({ lockedUntil })
    .where(
      and(
        keyOf(claim.environmentId, claim.key),
        eq(idempotencyKeys.state, 'in_flight'),
        lte(idempotencyKeys.lockedUntil, now),
      ),
    )
    .returning({ key: idempotencyKeys.key });
  return taken.length > 0;
}

/** Stores the first response of a claimed key (in flight, or whose write committed). */
export async function storeResponse(
  db: Db,
  claim: IdempotencyClaim,
  status: number,
  body: string,
  now: Date,
): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ state: 'completed', responseStatus: status, responseBody: body, lockedUntil: now })
    .where(and(keyOf(claim.environmentId, claim.key), inArray(idempotencyKeys.state, ['in_flight', 'committed'])));
}

/** Deletes a key still `in_flight`; a key whose write committed stays. */
export async function deleteInFlight(db: Db, claim: IdempotencyClaim): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(and(keyOf(claim.environmentId, claim.key), eq(idempotencyKeys.state, 'in_flight')));
}

/** Marks an `in_flight` key `committed`: run inside the write's transaction. */
export async function markCommitted(tx: Db, claim: IdempotencyClaim): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ state: 'committed' })
    .where(and(keyOf(claim.environmentId, claim.key), eq(idempotencyKeys.state, 'in_flight')));
}

/**
 * `markCommitted` as a WITH entry of a one-statement write: marks the key when the entry
 * `changed` returned a row. `environmentId` and `key` may be placeholders.
 */
export function markCommittedEntry(environmentId: unknown, key: unknown): SQL {
  return sql`idempotency_marked as (
      update ${idempotencyKeys} set state = 'committed'
      where environment_id = ${environmentId} and key = ${key} and state = 'in_flight'
        and exists (select 1 from changed)
    )`;
}

/**
 * `markCommittedEntry` for a statement that writes for several requests at once (a group
 * commit): marks the key of each `(environment_id, key)` row that `written` selects.
 */
export function markCommittedEntries(written: SQL): SQL {
  return sql`idempotency_marked as (
      update ${idempotencyKeys} k set state = 'committed'
      from (${written}) as w(environment_id, key)
      where k.environment_id = w.environment_id and k.key = w.key and k.state = 'in_flight'
    )`;
}

export async function deleteExpired(db: Db, now: Date): Promise<number> {
  const gone = await db
    .delete(idempotencyKeys)
    .where(lte(idempotencyKeys.expiresAt, now))
    .returning({ key: idempotencyKeys.key });
  return gone.length;
}

export async function countExpired(db: Db, now: Date): Promise<number> {
  const [row] = await db.select({ n: count() }).from(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, now));
  return Number(row?.n ?? 0);
}
