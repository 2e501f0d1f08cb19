import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Deps } from '../kernel/deps.ts';
import { invalid } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62 } from '../lib/random.ts';
import { isSealed, seal, unseal } from '../signing/material.ts';
import type {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsInput,
  UpdateWebhookEndpointInput,
  WebhookEndpoint,
} from './schemas.ts';
import {
  deleteEndpoint,
  type EndpointRow,
  endpointsWithPlainSecrets,
  insertEndpoint,
  loadEndpoint,
  type NewEndpoint,
  pageOfEndpoints,
  replaceSecret,
  updateEndpoint,
} from './store.ts';
import { checkWebhookUrl } from './url-policy.ts';

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
  const row = await insertEndpoint(scope.db, scope.deps, {
    id,
    environmentId: scope.env.id,
    url,
    secret: sealWebhookSecret(scope.deps.tokens.masterKey, id, randomBase62(40)),
    status: 'enabled',
    events: unique(input.events),
    createdAt: now,
    updatedAt: now,
  });
  return toWebhookEndpoint(row, scope.deps.tokens.masterKey);
}

export async function listWebhookEndpoints(scope: Scope, input: z.infer<typeof ListWebhookEndpointsInput>) {
  const page = await pageOfEndpoints(scope.db, scope.env.id, pageParams(input));
  return asList(page, (row) => toWebhookEndpoint(row, scope.deps.tokens.masterKey));
}

export async function getWebhookEndpoint(scope: Scope, id: string): Promise<WebhookEndpoint> {
  return toWebhookEndpoint(await loadEndpoint(scope.db, scope.env.id, id), scope.deps.tokens.masterKey);
}

export async function updateWebhookEndpoint(
  scope: Scope,
  input: z.infer<typeof UpdateWebhookEndpointInput>,
): Promise<WebhookEndpoint> {
  const changes: Partial<NewEndpoint> = { updatedAt: scope.now() };
  if (input.endpoint_url !== undefined) changes.url = await requireAllowedUrl(scope, input.endpoint_url);
  if (input.status !== undefined) changes.status = input.status;
  if (input.events !== undefined) changes.events = unique(input.events);
  const row = await updateEndpoint(scope.db, scope.env.id, input.id, changes);
  return toWebhookEndpoint(row, scope.deps.tokens.masterKey);
}

/** Every endpoint of the environment without its secret, oldest first (the admin CLI's list). */
export async function listAllWebhookEndpoints(scope: Scope): Promise<Omit<WebhookEndpoint, 'secret'>[]> {
  const all: Omit<WebhookEndpoint, 'secret'>[] = [];
  let after: string | undefined;
  do {
    const page = await listWebhookEndpoints(scope, { limit: 100, order: 'asc', after });
    all.push(...page.data.map(({ secret: _secret, ...rest }) => rest));
    after = page.list_metadata.after ?? undefined;
  } while (after);
  return all;
}

/** Deletes the endpoint; its queued deliveries go with it (foreign key cascade). */
export function deleteWebhookEndpoint(scope: Scope, id: string): Promise<void> {
  return deleteEndpoint(scope.db, scope.env.id, id);
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
    const rows = await endpointsWithPlainSecrets(deps.db, after, pageSize);
    for (const row of rows) {
      const sealedSecret = sealWebhookSecret(deps.tokens.masterKey, row.id, row.secret);
      if (await replaceSecret(deps.db, row.id, row.secret, sealedSecret)) sealed += 1;
    }
    if (rows.length < pageSize) return sealed;
    after = (rows.at(-1) as { id: string }).id;
  }
}
