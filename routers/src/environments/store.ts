import { apiKeys, type Db, environments, type FeatureFlags, lockEnvironment } from '@atrium/db';
import { and, asc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Deps } from '../kernel/deps.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { assertBelowQuota } from '../quotas.ts';

export type EnvironmentRow = typeof environments.$inferSelect;
export type NewEnvironment = typeof environments.$inferInsert;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type NewApiKey = typeof apiKeys.$inferInsert & { environmentId: string };

/** The environments whose id or name is `ref`, by id (at most two: enough to tell it is ambiguous). */
export function environmentsNamed(db: Db, ref: string): Promise<EnvironmentRow[]> {
  return db
    .select()
    .from(environments)
    .where(or(eq(environments.id, ref), eq(environments.name, ref)))
    .orderBy(asc(environments.id))
    .limit(2);
}

/** Whether any environment exists. */
export async function hasEnvironment(db: Db): Promise<boolean> {
  const rows = await db.select({ id: environments.id }).from(environments).limit(1);
  return rows.length > 0;
}

/** The advisory lock key of first-start setup ('atrium first run' folded into a bigint). */
const FIRST_RUN_LOCK_KEY = 0x61747269756d0001n;

/** Serialises first-start setup across processes until the transaction ends. */
export async function lockFirstRun(tx: Db): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${FIRST_RUN_LOCK_KEY})`);
}

export function allEnvironments(db: Db): Promise<EnvironmentRow[]> {
  return db.select().from(environments).orderBy(asc(environments.id));
}

/** An environment and its first API key, in the caller's transaction. */
export async function insertEnvironment(tx: Db, environment: NewEnvironment, apiKey: NewApiKey): Promise<void> {
  await tx.insert(environments).values(environment);
  await tx.insert(apiKeys).values(apiKey);
}

export async function setFlags(db: Db, environmentId: string, flags: FeatureFlags, now: Date): Promise<void> {
  await db.update(environments).set({ flags, updatedAt: now }).where(eq(environments.id, environmentId));
}

/** Inserts an API key unless the environment has its quota of them (revoked ones count too). */
export async function insertApiKey(db: Db, deps: Deps, row: NewApiKey): Promise<void> {
  await db.transaction(async (tx) => {
    await lockEnvironment(tx, row.environmentId);
    const mine = eq(apiKeys.environmentId, row.environmentId);
    await assertBelowQuota(tx, deps, 'apiKeysPerEnvironment', apiKeys, mine);
    await tx.insert(apiKeys).values(row);
  });
}

export function apiKeysOf(db: Db, environmentId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.environmentId, environmentId)).orderBy(asc(apiKeys.id));
}

/** Which live key a revocation names: its id, or the first KEY_PREFIX_LENGTH characters. */
export type ApiKeyMatch = { id: string } | { keyPrefix: string };

/**
 * Revokes the environment's live key that `match` names, if exactly one does. Returns how many
 * matched, and the revoked key when one was.
 */
export function revokeLiveApiKey(
  db: Db,
  environmentId: string,
  match: ApiKeyMatch,
  now: Date,
): Promise<{ matched: number; revoked?: Pick<ApiKeyRow, 'id' | 'keyPrefix' | 'revokedAt'> | undefined }> {
  const named = 'id' in match ? eq(apiKeys.id, match.id) : eq(apiKeys.keyPrefix, match.keyPrefix);
  const live = and(eq(apiKeys.environmentId, environmentId), isNull(apiKeys.revokedAt), named);
  return db.transaction(async (tx) => {
    const matched = await tx.select({ id: apiKeys.id }).from(apiKeys).where(live);
    if (matched.length !== 1) return { matched: matched.length };
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(live, eq(apiKeys.id, (matched[0] as { id: string }).id)))
      .returning({ id: apiKeys.id, keyPrefix: apiKeys.keyPrefix, revokedAt: apiKeys.revokedAt });
    return { matched: 1, revoked };
  });
}

/** The live (unrevoked) API keys among these hashes, with their environments (one indexed probe each). */
export function liveApiKeysByHash(db: Db, keyHashes: string[]) {
  return db
    .select({ keyHash: apiKeys.keyHash, keyId: apiKeys.id, ...environmentInfoColumns })
    .from(apiKeys)
    .innerJoin(environments, eq(environments.id, apiKeys.environmentId))
    .where(and(inArray(apiKeys.keyHash, keyHashes), isNull(apiKeys.revokedAt)));
}

/** The environments these client ids belong to (a client token's audience names one). */
export function environmentsOfClientIds(db: Db, clientIds: string[]): Promise<EnvironmentInfo[]> {
  return db.select(environmentInfoColumns).from(environments).where(inArray(environments.clientId, clientIds));
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

/** Locks the environment's row FOR UPDATE until the transaction ends (an environment's signing-key changes take turns). */
export async function lockEnvironmentForUpdate(tx: Db, environmentId: string): Promise<void> {
  await tx.select({ id: environments.id }).from(environments).where(eq(environments.id, environmentId)).for('update');
}

// Fragments of other stores' statements that read a row's environment with it (one statement each).

/** What a principal carries of its environment (`EnvironmentInfo`), for a select that joins it (`joinedEnvironment`). */
export const environmentInfoColumns = {
  id: environments.id,
  name: environments.name,
  clientId: environments.clientId,
  flags: environments.flags,
};

/** The arguments of another store's `.innerJoin(...joinedEnvironment(column))`: the environment its column names. */
export function joinedEnvironment(environmentId: AnyPgColumn) {
  return [environments, eq(environments.id, environmentId)] as const;
}
