import { type Db, newId } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';
import { insertEvent } from './store.ts';

/**
 * Appends an event in the caller's transaction: one row marked `fanout_pending`, whatever the
 * number of webhook endpoints (so an event exists exactly when its change committed); the webhook
 * worker expands it into deliveries later (`fanOutEvents`), off the request path. `data` is the
 * resource as the API shows it (its wire shape).
 */
export async function recordEvent(
  tx: Db,
  scope: Scope,
  event: string,
  data: Record<string, unknown>,
  organizationId?: string | null,
): Promise<string> {
  const id = newId('event');
  const organization = organizationId ?? (typeof data.organization_id === 'string' ? data.organization_id : null);
  await insertEvent(tx, {
    id,
    environmentId: scope.env.id,
    event,
    organizationId: organization,
    data,
    createdAt: scope.now(),
    fanoutPending: true,
    actor: scope.actor ?? null,
    reason: scope.reason ?? null,
  });
  return id;
}
