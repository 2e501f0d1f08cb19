import { apiKeys, type Db, environments, type FeatureFlags, newId } from '@atrium/db';
import { and, asc, eq, isNull, or } from 'drizzle-orm';
import { forgetEnvironment, KEY_PREFIX_LENGTH, keyPrefixOf, newApiKeySecret } from '../auth/service.ts';
import type { Deps, Scope } from '../context.ts';
import { conflict, invalid, notFound } from '../errors.ts';
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

/**
 * Revokes one live key of the environment, named by its id or by its prefix: the prefix
 * `api-keys list` shows (KEY_PREFIX_LENGTH characters) or more, up to the whole key. A shorter
 * prefix is refused (422), and so is a prefix that more than one key shares (409: revoke by id).
 */
export async function revokeApiKey(
  deps: Deps,
  input: { environment: string; id?: string | undefined; key_prefix?: string | undefined },
) {
  if ((input.id === undefined) === (input.key_prefix === undefined)) {
    throw invalid([
      { field: 'id', code: 'id_or_key_prefix_required', message: 'Pass exactly one of id or key_prefix.' },
    ]);
  }
  if (input.key_prefix !== undefined && input.key_prefix.length < KEY_PREFIX_LENGTH) {
    throw invalid([
      {
        field: 'key_prefix',
        code: 'key_prefix_too_short',
        message: `key_prefix must be at least ${KEY_PREFIX_LENGTH} characters (the prefix api-keys list shows), or revoke by id.`,
      },
    ]);
  }
  const env = await resolveEnvironment(deps.db, input.environment);
  const match =
    input.id !== undefined
      ? eq(apiKeys.id, input.id)
      : eq(apiKeys.keyPrefix, (input.key_prefix as string).slice(0, KEY_PREFIX_LENGTH));
  const [revoked] = await deps.db.transaction(async (tx) => {
    const live = and(eq(apiKeys.environmentId, env.id), isNull(apiKeys.revokedAt), match);
    const matched = await tx.select({ id: apiKeys.id }).from(apiKeys).where(live);
    if (matched.length === 0) throw notFound('api_key', input.id ?? (input.key_prefix as string));
    if (matched.length > 1) {
      throw conflict(
        'ambiguous_key_prefix',
        `${matched.length} API keys match the prefix '${input.key_prefix}'; revoke one by id (api-keys list shows ids).`,
      );
    }
    return tx
      .update(apiKeys)
      .set({ revokedAt: deps.now() })
      .where(and(live, eq(apiKeys.id, (matched[0] as { id: string }).id)))
      .returning({ id: apiKeys.id, keyPrefix: apiKeys.keyPrefix, revokedAt: apiKeys.revokedAt });
  });
  forgetEnvironment(deps, env.id);
  if (!revoked) throw notFound('api_key', input.id ?? (input.key_prefix as string));
  return {
    environment_id: env.id,
    id: revoked.id,
    key_prefix: revoked.keyPrefix,
    revoked_at: revoked.revokedAt?.toISOString() ?? null,
  };
}

export async function setFlag(deps: Deps, input: { environment: string; flag: string; enabled: boolean }) {
  if (!(KNOWN_FLAGS as readonly string[]).includes(input.flag)) {
    throw invalid([
      {
        field: 'flag',
        code: 'unknown_flag',
        message: `Unknown flag '${input.flag}'; the flags are: ${KNOWN_FLAGS.join(', ')}.`,
      },
    ]);
  }
  const env = await resolveEnvironment(deps.db, input.environment);
  const flags = { ...env.flags, [input.flag]: input.enabled };
  await deps.db.update(environments).set({ flags, updatedAt: deps.now() }).where(eq(environments.id, env.id));
  forgetEnvironment(deps, env.id);
  return { environment_id: env.id, flags };
}
