import { adminTokens, apiKeys, type Db, environments, newId } from '@atrium/db';
import { and, asc, eq, isNull, ne } from 'drizzle-orm';

/** The live (unrevoked) API key with this hash, with its environment. */
export async function liveApiKeyByHash(db: Db, keyHash: string) {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      id: environments.id,
      name: environments.name,
      clientId: environments.clientId,
      flags: environments.flags,
    })
    .from(apiKeys)
    .innerJoin(environments, eq(environments.id, apiKeys.environmentId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row;
}

/** The id of the admin token with this hash, if there is one. */
export async function adminTokenIdByHash(db: Db, tokenHash: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: adminTokens.id })
    .from(adminTokens)
    .where(eq(adminTokens.tokenHash, tokenHash))
    .limit(1);
  return row?.id;
}

/** Stores an admin token's hash; a hash already stored is left as it is. Returns the new row, if any. */
export async function insertAdminToken(db: Db, tokenHash: string) {
  const [row] = await db
    .insert(adminTokens)
    .values({ id: newId('adminToken'), tokenHash })
    .onConflictDoNothing()
    .returning({ id: adminTokens.id, createdAt: adminTokens.createdAt });
  return row;
}

/** Makes the token with this hash the only admin token; returns how many others it deleted. */
export function keepOnlyAdminToken(db: Db, tokenHash: string): Promise<number> {
  return db.transaction(async (tx) => {
    await insertAdminToken(tx, tokenHash);
    const deleted = await tx
      .delete(adminTokens)
      .where(ne(adminTokens.tokenHash, tokenHash))
      .returning({ id: adminTokens.id });
    return deleted.length;
  });
}

export async function hasAdminToken(db: Db): Promise<boolean> {
  const rows = await db.select({ id: adminTokens.id }).from(adminTokens).limit(1);
  return rows.length > 0;
}

/** Every admin token by id, oldest first. */
export function allAdminTokens(db: Db) {
  return db
    .select({ id: adminTokens.id, createdAt: adminTokens.createdAt })
    .from(adminTokens)
    .orderBy(asc(adminTokens.id));
}

/** Deletes an admin token; true when it existed. */
export async function deleteAdminToken(db: Db, id: string): Promise<boolean> {
  const deleted = await db.delete(adminTokens).where(eq(adminTokens.id, id)).returning({ id: adminTokens.id });
  return deleted.length > 0;
}
