import type { Db } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../kernel/scope.ts';
import { inBatches } from '../lib/batches.ts';
import type { Event, ListEventsInput } from './schemas.ts';
import { deleteEventsBefore, type EventRow, pageOfEvents } from './store.ts';

/** Events are kept this long; older ones are never listed and are purged by the worker. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** The single place that turns an event row into its wire shape (the events API and webhooks). */
export function toEvent(row: EventRow): Event {
  return {
    object: 'event',
    id: row.id,
    event: row.event,
    data: currentData(row.event, row.data),
    created_at: iso(row.createdAt),
  };
}

/**
 * A stored payload in today's wire shape. Organization events stored before the fix of #34 carry
 * `stripe_customer_id: null`, which upstream declares an optional string: absent, never null.
 * Events live EVENT_RETENTION_MS, so this can go once every installation has run the fix that long.
 */
function currentData(event: string, data: Record<string, unknown>): Record<string, unknown> {
  if (!event.startsWith('organization.') || data.stripe_customer_id !== null) return data;
  const { stripe_customer_id: _unset, ...rest } = data;
  return rest;
}

export async function listEvents(scope: Scope, input: z.infer<typeof ListEventsInput>) {
  const page = await pageOfEvents(
    scope.db,
    scope.env.id,
    {
      since: new Date(scope.now().getTime() - EVENT_RETENTION_MS),
      names: input.events,
      organizationId: input.organization_id,
      rangeStart: input.range_start ? new Date(input.range_start) : undefined,
      rangeEnd: input.range_end ? new Date(input.range_end) : undefined,
    },
    pageParams(input),
  );
  return asList(page, toEvent);
}

/**
 * Deletes events past the retention period (and, by cascade, their deliveries), in batches so
 * that no single statement holds many locks.
 */
export async function purgeExpiredEvents(db: Db, now: Date, batchSize = 5_000): Promise<number> {
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_MS);
  return inBatches(batchSize, (size) => deleteEventsBefore(db, cutoff, size));
}
