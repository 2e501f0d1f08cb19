import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { idText, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';

/**
 * The event log: one row per change, appended in the transaction of the change. `data` is the
 * resource as the API shows it. Kept 30 days.
 */
// @owner routers/src/events
export const events = pgTable(
  'events',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    event: text('event').notNull(),
    /** The organization the event concerns, when there is one (for the `organization_id` filter). */
    organizationId: idText('organization_id'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * True until the webhook worker has queued the event's deliveries (off the request path:
     * a write costs one row however many endpoints listen). Events recorded before the worker
     * did fan-out had their deliveries already, hence the default.
     */
    fanoutPending: boolean('fanout_pending').notNull().default(false),
    /** Who made the change when it came through the admin surface (console or CLI): `admin`. */
    actor: text('actor'),
    /** Why, when the operator had to say (a manual domain verification's reason). */
    reason: text('reason'),
  },
  (t) => [
    index('events_environment_id_idx').on(t.environmentId, t.id),
    index('events_environment_event_idx').on(t.environmentId, t.event, t.id),
    index('events_environment_organization_idx').on(t.environmentId, t.organizationId, t.id),
    index('events_created_at_idx').on(t.createdAt),
    index('events_fanout_pending_idx').on(t.environmentId, t.id).where(sql`${t.fanoutPending}`),
  ],
);
