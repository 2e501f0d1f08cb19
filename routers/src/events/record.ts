import { type Db, events, newId, webhookDeliveries, webhookEndpoints } from '@atrium/db';
import { and, eq, or, sql } from 'drizzle-orm';
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
  await tx.insert(events).values({
    id,
    environmentId: scope.env.id,
    event,
    organizationId: organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null),
    data,
    createdAt: now,
  });
  const endpoints = await tx
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.environmentId, scope.env.id),
        eq(webhookEndpoints.status, 'enabled'),
        or(
          sql`${webhookEndpoints.events} @> ${JSON.stringify([event])}::jsonb`,
          sql`${webhookEndpoints.events} @> '["*"]'::jsonb`,
        ),
      ),
    )
    // Held until the deliveries are written: an endpoint deleted meanwhile waits for this
    // transaction (and its deliveries go with it), instead of failing an unrelated write with a
    // foreign-key violation. KEY SHARE never blocks another writer, nor an endpoint's update.
    .for('key share');
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
