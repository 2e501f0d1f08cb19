import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, type ListParams, pageParams } from '../common/schemas.ts';
import { scopeOf } from '../environments/service.ts';
import { EVENT_RETENTION_MS, toEvent } from '../events/service.ts';
import { type EventRow, eventsOfDomain, insertEvent, pageOfEvents } from '../events/store.ts';
import type { Deps } from '../kernel/deps.ts';
import { notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { toOrganizationDomain } from '../organization-domains/claims.ts';
import {
  environmentOfDomain,
  getOrganizationDomain,
  verifyOrganizationDomainManually,
} from '../organization-domains/service.ts';
import type { DomainRow } from '../organization-domains/store.ts';
import { listOrganizations, toOrganization } from '../organizations/service.ts';
import { searchOrganizations } from '../organizations/store.ts';
import { deliveriesOfEndpoint, loadEndpoint, requeueDelivery } from '../webhooks/store.ts';

/** The actor every change made through the admin surface (console or CLI) is recorded with. */
export const ADMIN_ACTOR = 'admin';

/** A service Scope for an operator's call: its events carry the actor `admin` (and `reason`, if given). */
export async function adminScope(deps: Deps, environment: string, reason?: string): Promise<Scope> {
  return { ...(await scopeOf(deps, environment)), actor: ADMIN_ACTOR, reason };
}

/**
 * Records an operator's change to an environment itself (an API key, a flag, a signing key, a
 * webhook endpoint), which has no upstream event: the event log is where the console shows what
 * was done and by whom. Such events are not delivered to webhook endpoints (`fanout_pending`
 * false): they are the operator's audit trail, not the application's.
 */
export async function recordAdminEvent(
  deps: Deps,
  environmentId: string,
  event: string,
  data: Record<string, unknown>,
): Promise<void> {
  await insertEvent(deps.db, {
    id: newId('event'),
    environmentId,
    event,
    organizationId: null,
    data,
    createdAt: deps.now(),
    fanoutPending: false,
    actor: ADMIN_ACTOR,
  });
}

/** An event as the console shows it: the API's shape with who did it and why. */
function toConsoleEvent(row: EventRow) {
  return { ...toEvent(row), actor: row.actor, reason: row.reason };
}

/** The event stream, newest first, optionally of one organization. */
export async function consoleEvents(
  scope: Scope,
  input: z.infer<typeof ListParams> & { organization_id?: string | undefined; events?: string[] | undefined },
) {
  const filter = {
    since: new Date(scope.now().getTime() - EVENT_RETENTION_MS),
    names: input.events,
    organizationId: input.organization_id,
  };
  return asList(await pageOfEvents(scope.db, scope.env.id, filter, pageParams(input)), toConsoleEvent);
}

/** Organizations matching the console's search box (name, external id, id or domain); all when empty. */
export async function searchConsoleOrganizations(scope: Scope, text: string | undefined) {
  const query = text?.trim();
  if (!query) return (await listOrganizations(scope, { limit: 50, order: 'desc' })).data;
  return (await searchOrganizations(scope.db, scope.env.id, query, 50)).map(toOrganization);
}

/** What the DNS worker last saw of a domain, for an operator asking why it is not verified yet. */
function dnsCheckOf(row: DomainRow) {
  return {
    attempts: row.checkAttempts,
    last_checked_at: row.lastCheckedAt?.toISOString() ?? null,
    next_check_at: row.nextCheckAt?.toISOString() ?? null,
    error: row.verificationError,
    name_servers: row.nameServers ?? [],
  };
}

/** A domain with its DNS checks so far and its verification history: every event about it, newest first. */
export async function domainWithHistory(deps: Deps, domainId: string) {
  const scope = await adminScope(deps, await environmentOfDomain(deps.db, domainId));
  const domain = await getOrganizationDomain(scope, domainId, (row) => ({
    ...toOrganizationDomain(row),
    dns_check: dnsCheckOf(row),
  }));
  const rows = await eventsOfDomain(scope.db, scope.env.id, domain.organization_id, domainId);
  return { domain, history: rows.map(toConsoleEvent) };
}

/** Manual verification with the operator's reason, which its `organization_domain.verified` event records. */
export async function verifyDomainWithReason(deps: Deps, domainId: string, reason: string) {
  const scope = await adminScope(deps, await environmentOfDomain(deps.db, domainId), reason);
  return verifyOrganizationDomainManually(scope, domainId);
}

/** An endpoint's delivery log: its latest 50 deliveries with their state and last attempt. */
export async function webhookDeliveryLog(scope: Scope, endpointId: string) {
  await loadEndpoint(scope.db, scope.env.id, endpointId);
  const rows = await deliveriesOfEndpoint(scope.db, scope.env.id, endpointId, 50);
  return rows.map(({ delivery, event }) => ({
    id: delivery.id,
    event_id: delivery.eventId,
    event,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    last_attempt_at: delivery.lastAttemptAt ? iso(delivery.lastAttemptAt) : null,
    next_attempt_at: delivery.nextAttemptAt ? iso(delivery.nextAttemptAt) : null,
    created_at: iso(delivery.createdAt),
  }));
}

/** "Resend": the delivery is due again now (the worker sends it with a fresh attempt). */
export async function resendWebhookDelivery(scope: Scope, deliveryId: string) {
  const row = await requeueDelivery(scope.db, scope.env.id, deliveryId, scope.now());
  if (!row) throw notFound('webhook_delivery', deliveryId);
  await recordAdminEvent(scope.deps, scope.env.id, 'webhook_delivery.resent', {
    id: row.id,
    endpoint_id: row.endpointId,
    event_id: row.eventId,
  });
  return { id: row.id, status: row.status, next_attempt_at: row.nextAttemptAt ? iso(row.nextAttemptAt) : null };
}
