import { z } from 'zod';
import { Id, ListParams, listOf, QueryList, Timestamp } from '../common/schemas.ts';

/** Upstream's event object: `data` is the resource as the API shows it. */
export const Event = z
  .object({
    object: z.literal('event'),
    id: z.string(),
    event: z.string(),
    data: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof Event>;

export const EventList = listOf(Event);

const DateTime = z
  .string()
  .max(64)
  .refine((value) => !Number.isNaN(Date.parse(value)), { message: 'must be an ISO 8601 date-time' });

/** `events` accepts repeated parameters, `events[]=` and comma-separated values (the SDK's form). */
export const ListEventsInput = ListParams.extend({
  events: QueryList,
  organization_id: Id.optional(),
  range_start: DateTime.optional(),
  range_end: DateTime.optional(),
});
