import { WEBHOOK_ENDPOINT_STATUSES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';

/** Upstream's webhook endpoint object (the official SDK reads every field). */
export const WebhookEndpoint = z
  .object({
    object: z.literal('webhook_endpoint'),
    id: z.string(),
    endpoint_url: z.string(),
    secret: z.string(),
    status: z.enum(WEBHOOK_ENDPOINT_STATUSES),
    events: z.array(z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointList = listOf(WebhookEndpoint);

/** An event name (`organization.created`) or `*` for every event. */
const EventName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^(\*|[a-z0-9_]+(\.[a-z0-9_]+)+)$/, { message: 'must be an event name such as organization.created, or *' });
const EndpointUrl = z.string().min(1).max(2048);

export const WebhookEndpointIdInput = z.object({ id: Id });
export const ListWebhookEndpointsInput = ListParams;
export const CreateWebhookEndpointInput = z.object({
  endpoint_url: EndpointUrl,
  events: z.array(EventName).min(1).max(100),
});
export const UpdateWebhookEndpointInput = z.object({
  id: Id,
  endpoint_url: EndpointUrl.optional(),
  status: z.enum(WEBHOOK_ENDPOINT_STATUSES).optional(),
  events: z.array(EventName).min(1).max(100).optional(),
});
