import { index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';

export const IDEMPOTENCY_STATES = ['in_flight', 'committed', 'completed'] as const;
export type IdempotencyState = (typeof IDEMPOTENCY_STATES)[number];

/**
 * The first result of a call that carried an `Idempotency-Key`, per (environment, key):
 * replayed byte for byte for 24 h. `request_hash` is the SHA-256 of the procedure's path and its
 * raw input, so the key reused for another request is told apart. A row is `in_flight` while its first
 * request runs; `locked_until` bounds how long a crashed request can hold the key.
 */
// @owner routers/src/idempotency
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    environmentId: environmentIdColumn(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state').$type<IdempotencyState>().notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    lockedUntil: ts('locked_until').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'idempotency_keys_pkey', columns: [t.environmentId, t.key] }),
    index('idempotency_keys_expires_at_idx').on(t.expiresAt),
  ],
);
