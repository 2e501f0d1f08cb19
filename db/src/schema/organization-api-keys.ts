import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';

/**
 * API keys an organization's own customers use against the caller's application (upstream's
 * organization API keys), validated through `POST /api_keys/validations`. Stored only as a
 * SHA-256 hash; `obfuscated_value` is what may be shown again.
 */
export const organizationApiKeys = pgTable(
  'organization_api_keys',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    obfuscatedValue: text('obfuscated_value').notNull(),
    permissions: jsonb('permissions').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    lastUsedAt: ts('last_used_at'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('organization_api_keys_key_hash_unique').on(t.keyHash),
    index('organization_api_keys_organization_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);
