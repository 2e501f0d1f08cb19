import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * Shared rate-limit counters (one row per bucket: an API key's requests, its organization
 * deletes, an admin token's calls), fixed windows aligned on the database's clock so every
 * process counts into the same window. UNLOGGED (a custom migration): counts are not worth a WAL
 * write each, and losing them in a crash only resets the current windows. Not environment-scoped:
 * the bucket is a key id or a token hash, and rows are purged once their window is long over.
 */
// @owner routers/src/rate-limits
export const rateLimitWindows = pgTable('rate_limit_windows', {
  bucket: text('bucket').primaryKey(),
  /** Start of the current window, milliseconds since the epoch (a multiple of the window length). */
  windowStart: bigint('window_start', { mode: 'number' }).notNull(),
  /** Points counted in that window (refused attempts included, so a flood stays refused). */
  used: integer('used').notNull(),
});
