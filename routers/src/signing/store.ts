import { type Db, environments, signingKeys } from '@atrium/db';
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';

export type KeyRow = typeof signingKeys.$inferSelect;
export type NewKey = typeof signingKeys.$inferInsert & { environmentId: string };

function publishedWhere(environmentId: string, now: Date) {
  return and(
    eq(signingKeys.environmentId, environmentId),
    or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, now)),
  );
}

/** Locks the environment's row until the transaction ends: key changes of an environment take turns. */
async function lockKeysOf(tx: Db, environmentId: string): Promise<void> {
  await tx.select({ id: environments.id }).from(environments).where(eq(environments.id, environmentId)).for('update');
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
    await lockKeysOf(tx, key.environmentId);
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
    await lockKeysOf(tx, key.environmentId);
    await tx
      .update(signingKeys)
      .set({ retiresAt })
      .where(and(eq(signingKeys.environmentId, key.environmentId), isNull(signingKeys.retiresAt)));
    await tx.insert(signingKeys).values(key);
  });
}

/** The id of the environment a client id belongs to. */
export async function environmentIdOfClient(db: Db, clientId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.clientId, clientId))
    .limit(1);
  return row?.id;
}
