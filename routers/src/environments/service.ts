import { apiKeys, type Db, environments, type FeatureFlags, newId } from '@atrium/db';
import { and, asc, eq, isNull, like, or } from 'drizzle-orm';
import { forgetEnvironment, KEY_PREFIX_LENGTH, keyPrefixOf, newApiKeySecret } from '../auth/service.ts';
import type { Deps, Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { sha256Hex } from '../lib/random.ts';
import { assertBelowQuota, lockEnvironment } from '../quotas.ts';

export const KNOWN_FLAGS = ['groups', 'agents'] as const;
export const DEFAULT_FLAGS: FeatureFlags = { groups: true, agents: true };

type EnvironmentRow = typeof environments.$inferSelect;

/** An environment is named by its id or, when unambiguous, by its name. */
export async function resolveEnvironment(db: Db, ref: string): Promise<EnvironmentRow> {
  const rows = await db
    .select()
    .from(environments)
    .where(or(eq(environments.id, ref), eq(environments.name, ref)))
    .orderBy(asc(environments.id))
    .limit(2);
  const exact = rows.find((row) => row.id === ref);
  if (exact) return exact;
  if (rows.length !== 1 || !rows[0]) throw notFound('environment', ref);
  return rows[0];
}

/** A service Scope for an environment named by an operator (admin procedures). */
export async function scopeOf(deps: Deps, ref: string, now: () => Date = deps.now): Promise<Scope> {
  const row = await resolveEnvironment(deps.db, ref);
  return {
    db: deps.db,
    env: { id: row.id, name: row.name, clientId: row.clientId, flags: row.flags },
    now,
    deps,
  };
}

async function insertApiKey(db: Db, environmentId: string, live: boolean): Promise<string> {
  const secret = newApiKeySecret(live);
  await db.insert(apiKeys).values({
    id: newId('apiKey'),
    environmentId,
    keyHash: sha256Hex(secret),
    keyPrefix: keyPrefixOf(secret),
    live,
  });
  return secret;
}

export async function createEnvironment(
  deps: Deps,
  input: { name: string; flags?: FeatureFlags | undefined },
): Promise<{ environment_id: string; client_id: string; api_key: string }> {
  return deps.db.transaction(async (tx) => {
    const now = deps.now();
    const id = newId('environment');
    const clientId = newId('client');
    await tx.insert(environments).values({
      id,
      name: input.name,
      clientId,
      flags: Object.assign({}, DEFAULT_FLAGS, input.flags),
      createdAt: now,
      updatedAt: now,
    });
    const apiKey = await insertApiKey(tx, id, false);
    return { environment_id: id, client_id: clientId, api_key: apiKey };
  });
}

export async function listEnvironments(deps: Deps) {
  const rows = await deps.db.select().from(environments).orderBy(asc(environments.id));
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    client_id: row.clientId,
    flags: row.flags,
    created_at: row.createdAt.toISOString(),
  }));
}

export async function createApiKey(deps: Deps, input: { environment: string; live?: boolean | undefined }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  // The admin CLI lists every key of an environment: at most the quota, revoked ones included.
  const apiKey = await deps.db.transaction(async (tx) => {
    await lockEnvironment(tx, env.id);
    await assertBelowQuota(tx, deps, 'apiKeysPerEnvironment', apiKeys, eq(apiKeys.environmentId, env.id));
    return insertApiKey(tx, env.id, input.live ?? false);
  });
  return { environment_id: env.id, api_key: apiKey, key_prefix: keyPrefixOf(apiKey) };
}

export async function listApiKeys(deps: Deps, input: { environment: string }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  const rows = await deps.db.select().from(apiKeys).where(eq(apiKeys.environmentId, env.id)).orderBy(asc(apiKeys.id));
  return rows.map((row) => ({
    id: row.id,
    key_prefix: row.keyPrefix,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  }));
}

/** Revokes every live key of the environment starting with the prefix; refused at once. */
export async function revokeApiKeys(deps: Deps, input: { environment: string; key_prefix: string }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  // A prefix names the keys whose stored prefix starts with it; a longer one (up to the whole
  // key) names the key whose stored prefix it starts with.
  const given = input.key_prefix;
  const escaped = given.replace(/[\\%_]/g, (c) => `\\${c}`);
  const match =
    given.length >= KEY_PREFIX_LENGTH
      ? eq(apiKeys.keyPrefix, given.slice(0, KEY_PREFIX_LENGTH))
      : like(apiKeys.keyPrefix, `${escaped}%`);
  const revoked = await deps.db
    .update(apiKeys)
    .set({ revokedAt: deps.now() })
    .where(and(eq(apiKeys.environmentId, env.id), isNull(apiKeys.revokedAt), match))
    .returning({ id: apiKeys.id, keyPrefix: apiKeys.keyPrefix });
  if (revoked.length === 0) throw notFound('api_key', input.key_prefix);
  forgetEnvironment(deps, env.id);
  return { environment_id: env.id, revoked: revoked.map((r) => r.keyPrefix) };
}

export async function setFlag(deps: Deps, input: { environment: string; flag: string; enabled: boolean }) {
  const env = await resolveEnvironment(deps.db, input.environment);
  const flags = { ...env.flags, [input.flag]: input.enabled };
  await deps.db.update(environments).set({ flags, updatedAt: deps.now() }).where(eq(environments.id, env.id));
  forgetEnvironment(deps, env.id);
  return { environment_id: env.id, flags };
}
