import { type Db, events, newId } from '@atrium/db';
import type { Scope } from '../context.ts';

/**
 * Appends an event in the caller's transaction, so an event exists exactly when its change
 * committed. `data` is the resource as the API shows it (its wire shape).
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
): Promise<void> {
  await tx.insert(events).values({
    id: newId('event'),
    environmentId: scope.env.id,
    event,
    organizationId: organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null),
    data,
    createdAt: scope.now(),
  });
}
