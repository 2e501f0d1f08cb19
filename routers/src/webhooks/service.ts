import { newId, paginate, webhookEndpoints } from '@atrium/db';
import { and, asc, eq, gt, notLike } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Deps, Scope } from '../context.ts';
import { invalid, notFound } from '../errors.ts';
import { randomBase62 } from '../lib/random.ts';
import { assertBelowQuota, lockEnvironment } from '../quotas.ts';
import { isSealed, seal, unseal } from '../signing/material.ts';
import type {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsInput,
  UpdateWebhookEndpointInput,
  WebhookEndpoint,
} from './schemas.ts';
import { checkWebhookUrl } from './url-policy.ts';

type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** A webhook secret at rest: sealed under the master key, bound to its endpoint id. */
export function sealWebhookSecret(masterKey: Buffer, endpointId: string, secret: string): string {
  return seal(masterKey, endpointId, Buffer.from(secret, 'utf8'));
}

/** The secret of a stored endpoint (a legacy plaintext row, not yet sealed, reads as it is). */
export function openWebhookSecret(masterKey: Buffer, endpointId: string, stored: string): string {
  if (!isSealed(stored)) return stored;
  return unseal(masterKey, endpointId, stored, `The secret of webhook endpoint ${endpointId}`).toString('utf8');
}

/** The single place that turns an endpoint row into its wire shape. */
export function toWebhookEndpoint(row: EndpointRow, masterKey: Buffer): WebhookEndpoint {
  return {
    object: 'webhook_endpoint',
    id: row.id,
    endpoint_url: row.url,
    secret: openWebhookSecret(masterKey, row.id, row.secret),
    status: row.status,
    events: row.events,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

async function requireAllowedUrl(scope: Scope, raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, scope.deps.config.webhooksAllowPrivate === true);
  if (!check.ok) {
    throw invalid([{ field: 'endpoint_url', code: 'invalid_endpoint_url', message: check.message }]);
  }
  return check.url.toString();
}

const unique = (names: string[]) => [...new Set(names)];

export async function createWebhookEndpoint(
  scope: Scope,
  input: z.infer<typeof CreateWebhookEndpointInput>,
): Promise<WebhookEndpoint> {
  const url = await requireAllowedUrl(scope, input.endpoint_url);
  const now = scope.now();
  const id = newId('webhookEndpoint');
  const row = await scope.db.transaction(async (tx) => {
    // Every event fans out to the endpoints: at most the quota, counted under the environment's lock.
    await lockEnvironment(tx, scope.env.id);
    await assertBelowQuota(
      tx,
      scope.deps,
      'webhookEndpointsPerEnvironment',
      webhookEndpoints,
      eq(webhookEndpoints.environmentId, scope.env.id),
    );
    const [inserted] = await tx
      .insert(webhookEndpoints)
      .values({
        id,
        environmentId: scope.env.id,
        url,
        secret: sealWebhookSecret(scope.deps.tokens.masterKey, id, randomBase62(40)),
        status: 'enabled',
        events: unique(input.events),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return inserted;
  });
  if (!row) throw new Error('insert returned no row');
  return toWebhookEndpoint(row, scope.deps.tokens.masterKey);
}

export async function listWebhookEndpoints(scope: Scope, input: z.infer<typeof ListWebhookEndpointsInput>) {
  const page = await paginate(
    pageParams(input),
    webhookEndpoints.id,
    (q) =>
      scope.db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.environmentId, scope.env.id), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  return asList(page, (row) => toWebhookEndpoint(row, scope.deps.tokens.masterKey));
}

export async function getWebhookEndpoint(scope: Scope, id: string): Promise<WebhookEndpoint> {
  const [row] = await scope.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.environmentId, scope.env.id)))
    .limit(1);
  if (!row) throw notFound('webhook_endpoint', id);
  return toWebhookEndpoint(row, scope.deps.tokens.masterKey);
}

export async function updateWebhookEndpoint(
  scope: Scope,
  input: z.infer<typeof UpdateWebhookEndpointInput>,
): Promise<WebhookEndpoint> {
  const changes: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: scope.now() };
  if (input.endpoint_url !== undefined) changes.url = await requireAllowedUrl(scope, input.endpoint_url);
  if (input.status !== undefined) changes.status = input.status;
  if (input.events !== undefined) changes.events = unique(input.events);
  const [row] = await scope.db
    .update(webhookEndpoints)
    .set(changes)
    .where(and(eq(webhookEndpoints.id, input.id), eq(webhookEndpoints.environmentId, scope.env.id)))
    .returning();
  if (!row) throw notFound('webhook_endpoint', input.id);
  return toWebhookEndpoint(row, scope.deps.tokens.masterKey);
}

/** Deletes the endpoint; its queued deliveries go with it (foreign key cascade). */
export async function deleteWebhookEndpoint(scope: Scope, id: string): Promise<void> {
  const deleted = await scope.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.environmentId, scope.env.id)))
    .returning({ id: webhookEndpoints.id });
  if (deleted.length === 0) throw notFound('webhook_endpoint', id);
}

/**
 * Start-up: seals every webhook secret still stored in plaintext (rows written before secrets
 * were encrypted), a page at a time. Returns how many it sealed; a row changed meanwhile is
 * left to the next start (reads accept plaintext until then).
 */
export async function sealLegacyWebhookSecrets(deps: Deps, pageSize = 500): Promise<number> {
  let sealed = 0;
  let after = '';
  for (;;) {
    const rows = await deps.db
      .select({ id: webhookEndpoints.id, secret: webhookEndpoints.secret })
      .from(webhookEndpoints)
      .where(and(gt(webhookEndpoints.id, after), notLike(webhookEndpoints.secret, 'v1.%')))
      .orderBy(asc(webhookEndpoints.id))
      .limit(pageSize);
    for (const row of rows) {
      const updated = await deps.db
        .update(webhookEndpoints)
        .set({ secret: sealWebhookSecret(deps.tokens.masterKey, row.id, row.secret) })
        .where(and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.secret, row.secret)))
        .returning({ id: webhookEndpoints.id });
      sealed += updated.length;
    }
    if (rows.length < pageSize) return sealed;
    after = (rows.at(-1) as { id: string }).id;
  }
}
