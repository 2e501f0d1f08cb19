import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';

export type FeatureFlags = Record<string, boolean>;

/**
 * An environment owns everything else; its id is the `environment_id` of every other row. Its
 * name is unique per installation, since operators name environments by it (`--environment`).
 */
// @owner routers/src/environments
export const environments = pgTable(
  'environments',
  {
    id: idText('id').primaryKey(),
    name: text('name').notNull(),
    clientId: idText('client_id').notNull(),
    flags: jsonb('flags').$type<FeatureFlags>().notNull().default(sql`'{}'::jsonb`),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('environments_client_id_unique').on(t.clientId),
    uniqueIndex('environments_name_unique').on(t.name),
  ],
);

/**
 * The `environment_id` every environment-scoped table carries: it owns the row (deleting an
 * environment deletes everything in it) and is the leading column of every list index.
 */
export const environmentIdColumn = () =>
  idText('environment_id')
    .notNull()
    .references(() => environments.id, { onDelete: 'cascade' });

/** API keys are stored only as SHA-256 hashes; the prefix lets an operator name one. */
// @owner routers/src/environments
export const apiKeys = pgTable(
  'api_keys',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    live: boolean('live').notNull().default(false),
    createdAt: timestamps.createdAt,
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_unique').on(t.keyHash),
    index('api_keys_environment_idx').on(t.environmentId, t.id),
  ],
);

/**
 * Admin tokens guard the admin tRPC router. They sit above environments, so this is the one
 * table without an `environment_id`.
 */
// @owner routers/src/auth
export const adminTokens = pgTable(
  'admin_tokens',
  {
    id: idText('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamps.createdAt,
  },
  (t) => [uniqueIndex('admin_tokens_token_hash_unique').on(t.tokenHash)],
);
