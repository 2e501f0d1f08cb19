import { type Db, signingKeys } from '@atrium/db';
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import { lockEnvironmentForUpdate } from '../environments/store.ts';

export type KeyRow = typeof signingKeys.$inferSelect;
export type NewKey = typeof signingKeys.$inferInsert & { environmentId: string };

function publishedWhere(environmentId: string, now: Date) {
  return and(
    eq(signingKeys.environmentId, environmentId),
    or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, now)),
  );
}

/** The environment's keys not yet retired at `now`, newest first. */
export function publishedKeys(db: Db, environmentId: string, now: Date): Promise<KeyRow[]> {
  return db.select().from(signingKeys).where(publishedWhere(environmentId, now)).orderBy(desc(signingKeys.id));
}

/** Every key of the environment, newest first. */
export function keysOf(db: Db, environmentId: string): Promise<KeyRow[]> {
  return db
    .select()
    .from(signingKeys)
    .where(eq(signingKeys.environmentId, environmentId))
    .orderBy(desc(signingKeys.id));
}

/** Inserts `key` unless the environment has a published key at `now` (checked under its lock). */
export async function insertFirstKey(db: Db, key: NewKey, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await lockEnvironmentForUpdate(tx, key.environmentId);
    const [existing] = await tx
      .select({ id: signingKeys.id })
      .from(signingKeys)
      .where(publishedWhere(key.environmentId, now))
      .limit(1);
    if (!existing) await tx.insert(signingKeys).values(key);
  });
}

/** Inserts `key` and sets `retiresAt` on every key of the environment that had none. */
export async function insertRotatedKey(db: Db, key: NewKey, retiresAt: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await lockEnvironmentForUpdate(tx, key.environmentId);
    await tx
      .update(signingKeys)
      .set({ retiresAt })
      .where(and(eq(signingKeys.environmentId, key.environmentId), isNull(signingKeys.retiresAt)));
    await tx.insert(signingKeys).values(key);
  });
}
