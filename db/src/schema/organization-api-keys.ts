import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { organizationMemberships, users } from './users.ts';

/** Who owns an API key: the organization itself, or one of its members (upstream's user API keys). */
export const API_KEY_OWNER_TYPES = ['organization', 'user'] as const;
export type ApiKeyOwnerType = (typeof API_KEY_OWNER_TYPES)[number];

/**
 * API keys an organization's own customers use against the caller's application (upstream's
 * organization API keys), and the per-user keys a member holds in one organization (issue #38),
 * both validated through `POST /api_keys/validations`. Stored only as a SHA-256 hash;
 * `obfuscated_value` is what may be shown again. A user key names the membership it was made
 * under: deleting the membership (or the user) deletes the key with it.
 */
// @owner routers/src/organization-api-keys
export const organizationApiKeys = pgTable(
  'organization_api_keys',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    ownerType: text('owner_type').$type<ApiKeyOwnerType>().notNull().default('organization'),
    userId: idText('user_id').references(() => users.id, { onDelete: 'cascade' }),
    organizationMembershipId: idText('organization_membership_id').references(() => organizationMemberships.id, {
      onDelete: 'cascade',
    }),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    obfuscatedValue: text('obfuscated_value').notNull(),
    permissions: jsonb('permissions').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    lastUsedAt: ts('last_used_at'),
    /** When the key stops validating (set by the widgets' expiry); null: never. */
    expiresAt: ts('expires_at'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('organization_api_keys_key_hash_unique').on(t.keyHash),
    index('organization_api_keys_organization_idx').on(t.environmentId, t.organizationId, t.id),
    index('organization_api_keys_user_idx').on(t.environmentId, t.userId, t.id),
    index('organization_api_keys_membership_idx').on(t.organizationMembershipId),
    check(
      'organization_api_keys_owner_check',
      sql`(${t.ownerType} = 'organization' and ${t.userId} is null and ${t.organizationMembershipId} is null) or (${t.ownerType} = 'user' and ${t.userId} is not null and ${t.organizationMembershipId} is not null)`,
    ),
  ],
);
