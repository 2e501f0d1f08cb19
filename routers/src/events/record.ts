import { type Db, events, newId, rawRows, webhookDeliveries, webhookEndpoints } from '@atrium/db';
import { sql } from 'drizzle-orm';
import type { Scope } from '../context.ts';

/**
 * Appends an event in the caller's transaction, so an event exists exactly when its change
 * committed. `data` is the resource as the API shows it (its wire shape). In the same
 * transaction, one delivery is queued for every enabled webhook endpoint of the environment
 * that subscribes to the event, so a committed event is never lost to its endpoints.
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
): Promise<string> {
  const now = scope.now();
  const id = newId('event');
  const organization = organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null);
  // One round trip: the event is inserted by a data-modifying CTE while the statement reads the
  // endpoints it is owed to. The endpoints stay KEY SHARE locked until the deliveries are
  // written: an endpoint deleted meanwhile waits for this transaction (and its deliveries go
  // with it) instead of failing an unrelated write with a foreign-key violation. KEY SHARE never
  // blocks another writer, nor an endpoint's update.
  const endpoints = await rawRows<{ id: string }>(
    tx,
    sql`with recorded as (
      insert into ${events} (id, environment_id, event, organization_id, data, created_at)
      values (${id}, ${scope.env.id}, ${event}, ${organization}, ${JSON.stringify(data)}::jsonb, ${now.toISOString()}::timestamptz)
    )
    select ${webhookEndpoints.id} as id from ${webhookEndpoints}
    where ${webhookEndpoints.environmentId} = ${scope.env.id}
      and ${webhookEndpoints.status} = 'enabled'
      and (${webhookEndpoints.events} @> ${JSON.stringify([event])}::jsonb or ${webhookEndpoints.events} @> '["*"]'::jsonb)
    for key share of ${webhookEndpoints}`,
  );
  if (endpoints.length > 0) {
    await tx.insert(webhookDeliveries).values(
      endpoints.map((endpoint) => ({
        id: newId('webhookDelivery'),
        environmentId: scope.env.id,
        endpointId: endpoint.id,
        eventId: id,
        status: 'pending' as const,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })),
    );
  }
  return id;
}
