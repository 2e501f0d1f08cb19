import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { events } from './events.ts';

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** A receiver of signed event deliveries. `events` lists the event names it wants (`*` = all). */
// @owner routers/src/webhooks
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    url: text('url').notNull(),
    /** The signing secret, sealed under the master key (`v1.<iv>.<tag>.<ciphertext>`). */
    secret: text('secret').notNull(),
    status: text('status').$type<WebhookEndpointStatus>().notNull().default('enabled'),
    events: jsonb('events').$type<string[]>().notNull().default(sql`'["*"]'::jsonb`),
    ...timestamps,
  },
  (t) => [index('webhook_endpoints_environment_id_idx').on(t.environmentId, t.id)],
);

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * One event owed to one endpoint. Made by the webhook worker's fan-out of the event (at most
 * once per endpoint and event: the unique index), worked off by the delivery worker;
 * `next_attempt_at` doubles as the lease of an attempt in flight.
 */
// @owner routers/src/webhooks
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    endpointId: idText('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: idText('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    lastAttemptAt: ts('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('webhook_deliveries_endpoint_event_unique').on(t.endpointId, t.eventId),
    index('webhook_deliveries_environment_id_idx').on(t.environmentId, t.id),
    // Led by the environment, so the worker can take due deliveries round-robin by environment.
    index('webhook_deliveries_due_idx').on(t.environmentId, t.nextAttemptAt, t.id).where(sql`${t.status} = 'pending'`),
  ],
);

/** Every attempt of a delivery, kept for the operator (status code, error, duration). */
// @owner routers/src/webhooks
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    deliveryId: idText('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attemptedAt: ts('attempted_at').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.id)],
);
