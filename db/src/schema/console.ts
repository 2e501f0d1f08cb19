import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { adminTokens } from './environments.ts';

/**
 * Operator console sign-ins: the cookie's secret is kept only as its SHA-256, so deleting the
 * row (sign-out, expiry, or the admin token's revocation by cascade) ends the session for good.
 * Above environments, like the admin tokens it stands for.
 */
// @owner routers/src/auth
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: idText('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    adminTokenId: idText('admin_token_id')
      .notNull()
      .references(() => adminTokens.id, { onDelete: 'cascade' }),
    createdAt: timestamps.createdAt,
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('console_sessions_token_hash_unique').on(t.tokenHash),
    index('console_sessions_expires_at_idx').on(t.expiresAt),
  ],
);
