import { apiKeys, type Db, environments, type FeatureFlags, lockEnvironment } from '@atrium/db';
import { and, asc, eq, isNull, or, sql } from 'drizzle-orm';
import type { Deps } from '../kernel/deps.ts';
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
