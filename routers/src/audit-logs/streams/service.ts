// An organization's log stream as its IT admin sets it up (issue #38): the portal's `log_streams`
// page writes it (get, create or replace, pause, resume, remove), the AdminPortalAuditLogStreaming
// widget and the console read it. The destination's fields are checked by its type's schemas
// (DESTINATIONS), its URLs by the webhooks' address rule when saved (and again by the delivery
// worker at each connection), its secrets sealed under the master key and never shown again: a
// read says only which secret fields are set.
//
// Replacing a stream keeps its id and its cursor (`delivered_through`): a new destination carries
// on from the last event delivered, it is not sent the history again. When the destination changes
// (its type, any public field or any secret), its attempt state is reset (no attempts, due now, no
// last error) and a stream the destination had refused (`error`, `invalid`) is active again; a
// paused stream stays paused. Saving the same destination again changes nothing of its delivery.
// Removing the stream and setting it up again starts a new stream (a new id, no cursor).

import { AUDIT_LOG_STREAM_TYPES, type AuditLogStreamType, newId } from '@atrium/db';
import { z } from 'zod';
import { iso } from '../../common/schemas.ts';
import type { Deps } from '../../kernel/deps.ts';
import { ApiError, forbidden, invalid, invalidOfZod } from '../../kernel/errors.ts';
import type { ClientScope } from '../../kernel/principals.ts';
import { requirePermission } from '../../kernel/principals.ts';
import type { Scope } from '../../kernel/scope.ts';
import { requireOrganization } from '../../organizations/lookup.ts';
import type { LivePortalSession } from '../../portal/store.ts';
import { checkWebhookUrl } from '../../webhooks/url-policy.ts';
import { DESTINATIONS, openStreamCredentials, sealStreamCredentials } from './destinations.ts';
import {
  deleteStreamOfOrganization,
  findStreamOfOrganization,
  insertStream,
  type AuditLogStreamRow as Row,
  updateStreamOfOrganization,
} from './store.ts';

/** The stream as the portal page and the console show it (snake_case): never a secret, only which are set. */
export interface LogStreamView {
  object: 'log_stream';
  id: string;
  organization_id: string;
  type: AuditLogStreamType;
  state: Row['state'];
  config: Record<string, unknown>;
  /** The names of the destination's secret fields that hold a value (never the values). */
  credentials_set: string[];
  last_error: string | null;
  last_status_code: number | null;
  /** The last audit log event delivered (the cursor), null before the first delivery. */
  last_delivered_event_id: string | null;
  last_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The secret fields of a stored stream that hold a value: its sealed credentials opened, names only. */
function credentialsSet(deps: Deps, row: Row): string[] {
  if (row.credentials === null) return [];
  const opened = openStreamCredentials(deps.tokens.masterKey, row) as Record<string, unknown>;
  return Object.keys(opened).filter((key) => {
    const value = opened[key];
    return value !== undefined && value !== '' && !(typeof value === 'object' && Object.keys(value ?? {}).length === 0);
  });
}

export function toLogStreamView(deps: Deps, row: Row): LogStreamView {
  return {
    object: 'log_stream',
    id: row.id,
    organization_id: row.organizationId,
    type: row.type,
    state: row.state,
    config: row.config,
    credentials_set: credentialsSet(deps, row),
    last_error: row.lastError,
    last_status_code: row.lastStatusCode,
    last_delivered_event_id: row.deliveredThrough,
    last_attempt_at: row.lastAttemptAt ? iso(row.lastAttemptAt) : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const noStream = () => new ApiError(404, 'entity_not_found', 'This organization has no log stream.');

/** The organization's stream (404 for an organization of another environment), or null when it has none. */
export async function getLogStream(scope: Scope, organizationId: string): Promise<LogStreamView | null> {
  const organization = await requireOrganization(scope.db, scope, organizationId);
  const row = await findStreamOfOrganization(scope.db, scope.env.id, organization.id);
  return row ? toLogStreamView(scope.deps, row) : null;
}

const TypeField = z.object({ type: z.enum(AUDIT_LOG_STREAM_TYPES) });

/** The URL fields of the destinations (`url`, `endpoint`): where the worker connects, so checked when saved. */
const URL_FIELDS = ['url', 'endpoint'] as const;

async function requireAllowedUrls(scope: Scope, config: Record<string, unknown>): Promise<void> {
  const allowPrivate = scope.deps.config.webhooksAllowPrivate === true;
  for (const field of URL_FIELDS) {
    const raw = config[field];
    if (typeof raw !== 'string') continue;
    const check = await checkWebhookUrl(raw, allowPrivate);
    if (!check.ok) {
      const message = check.message.replace('endpoint_url', `config.${field}`);
      throw invalid([{ field: `config.${field}`, code: 'invalid_destination_url', message }]);
    }
  }
}

/** Secrets with nothing in them (GenericHttps without headers) are stored as null, not as a sealed `{}`. */
function hasSecrets(credentials: Record<string, unknown>): boolean {
  return Object.values(credentials).some(
    (v) => v !== undefined && !(typeof v === 'object' && v !== null && Object.keys(v).length === 0),
  );
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Creates or replaces the organization's stream from `{ type, config, credentials }`: 422 naming
 * the field (`type`, `config.url`, `credentials.api_key`…) and nothing stored when a field is
 * wrong or a URL points to a private address (unless allowed). On a replace of the same type,
 * `credentials` may be left out to keep the stored secrets.
 */
export async function saveLogStream(scope: Scope, organizationId: string, body: unknown): Promise<LogStreamView> {
  const organization = await requireOrganization(scope.db, scope, organizationId);
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const typed = TypeField.safeParse({ type: fields.type });
  if (!typed.success) {
    const message = `type must be one of: ${AUDIT_LOG_STREAM_TYPES.join(', ')}.`;
    throw invalid([{ field: 'type', code: 'invalid_log_stream_type', message }]);
  }
  const type = typed.data.type;
  const existing = await findStreamOfOrganization(scope.db, scope.env.id, organization.id);
  const keepSecrets = existing?.type === type && fields.credentials === undefined;
  const destination = DESTINATIONS[type];
  const schema = z.object({
    config: destination.config,
    credentials: keepSecrets ? z.undefined() : (destination.credentials as z.ZodType<Record<string, unknown>>),
  });
  const credentials = keepSecrets ? undefined : (fields.credentials ?? {});
  const parsed = schema.safeParse({ config: fields.config ?? {}, credentials });
  if (!parsed.success) throw invalidOfZod(parsed.error);
  const config = parsed.data.config as Record<string, unknown>;
  await requireAllowedUrls(scope, config);
  const now = scope.now();
  const id = existing?.id ?? newId('auditLogStream');
  const secrets = parsed.data.credentials;
  const sealed =
    secrets === undefined
      ? (existing?.credentials ?? null)
      : hasSecrets(secrets)
        ? sealStreamCredentials(scope.deps.tokens.masterKey, id, secrets)
        : null;
  if (!existing) {
    const row = await insertStream(scope.db, {
      id,
      environmentId: scope.env.id,
      organizationId: organization.id,
      type,
      state: 'active',
      config,
      credentials: sealed,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    });
    return toLogStreamView(scope.deps, row);
  }
  const changed = existing.type !== type || !sameJson(existing.config, config) || secrets !== undefined;
  if (!changed) return toLogStreamView(scope.deps, existing);
  const row = await updateStreamOfOrganization(scope.db, scope.env.id, organization.id, {
    type,
    config,
    credentials: sealed,
    state: existing.state === 'inactive' ? 'inactive' : 'active',
    attempts: 0,
    nextAttemptAt: now,
    lastStatusCode: null,
    lastError: null,
    updatedAt: now,
  });
  if (!row) throw noStream();
  return toLogStreamView(scope.deps, row);
}

/**
 * Pauses (`inactive`) or resumes (`active`, due now, attempts reset) the organization's stream;
 * 404 when it has none. Resuming a stream its destination refused tries it again at once.
 */
export async function setLogStreamPaused(
  scope: Scope,
  organizationId: string,
  paused: boolean,
): Promise<LogStreamView> {
  const organization = await requireOrganization(scope.db, scope, organizationId);
  const now = scope.now();
  const set = paused
    ? { state: 'inactive' as const, updatedAt: now }
    : { state: 'active' as const, attempts: 0, nextAttemptAt: now, updatedAt: now };
  const row = await updateStreamOfOrganization(scope.db, scope.env.id, organization.id, set);
  if (!row) throw noStream();
  return toLogStreamView(scope.deps, row);
}

/** Removes the organization's stream (its secrets with it); 404 when it has none. */
export async function deleteLogStream(scope: Scope, organizationId: string): Promise<void> {
  const organization = await requireOrganization(scope.db, scope, organizationId);
  if (!(await deleteStreamOfOrganization(scope.db, scope.env.id, organization.id))) throw noStream();
}

// The portal's `log_streams` page: the same operations for the session's organization only.

const scopeOfSession = (deps: Deps, live: LivePortalSession): Scope => ({
  db: deps.db,
  env: live.env,
  now: deps.now,
  deps,
});

function requireLogStreamsSession(live: LivePortalSession): string {
  if (live.session.intent !== 'log_streams') {
    throw forbidden('forbidden', 'This admin portal session may not manage the log stream.');
  }
  return live.session.organizationId;
}

/** The `log_streams` page's status: the organization's stream, or null. */
export const portalLogStream = (deps: Deps, live: LivePortalSession) =>
  getLogStream(scopeOfSession(deps, live), requireLogStreamsSession(live));

/** The page's "Save": creates or replaces the stream of the session's organization. */
export const savePortalLogStream = (deps: Deps, live: LivePortalSession, body: unknown) =>
  saveLogStream(scopeOfSession(deps, live), requireLogStreamsSession(live), body);

/** The page's "Pause" and "Resume". */
export const pausePortalLogStream = (deps: Deps, live: LivePortalSession, paused: boolean) =>
  setLogStreamPaused(scopeOfSession(deps, live), requireLogStreamsSession(live), paused);

/** The page's "Remove". */
export const deletePortalLogStream = (deps: Deps, live: LivePortalSession) =>
  deleteLogStream(scopeOfSession(deps, live), requireLogStreamsSession(live));

// The AdminPortalAuditLogStreaming widget (`GET /_widgets/admin-portal/audit-log-stream`).

export const WIDGET_STREAM_STATES = ['Active', 'Inactive', 'Error', 'Invalid'] as const;
const WIDGET_STATE: Record<Row['state'], (typeof WIDGET_STREAM_STATES)[number]> = {
  active: 'Active',
  inactive: 'Inactive',
  error: 'Error',
  invalid: 'Invalid',
};

/** The widget's `AuditLogStreamJSON` (optional fields absent, not null, when unset). */
export interface WidgetAuditLogStream {
  id: string;
  state: (typeof WIDGET_STREAM_STATES)[number];
  type: AuditLogStreamType;
  errorMessage?: string;
  lastSyncedEventId?: string;
  auditLogTrailId: string;
}

/**
 * The caller's organization's stream as the widget reads it, or `{}` when there is none; the
 * token needs `widgets:audit-log-streaming:manage` (a `log_streams` portal session holds it). The
 * organization has one audit log trail: its id is the organization's.
 */
export async function widgetAuditLogStream(scope: ClientScope): Promise<WidgetAuditLogStream | Record<string, never>> {
  requirePermission(scope, 'widgets:audit-log-streaming:manage');
  const row = await findStreamOfOrganization(scope.db, scope.env.id, scope.client.organizationId);
  if (!row) return {};
  const stream: WidgetAuditLogStream = {
    id: row.id,
    state: WIDGET_STATE[row.state],
    type: row.type,
    auditLogTrailId: row.organizationId,
  };
  // Absent, not null, when unset (and no object literal of two spreads: tests/src/patches).
  if (row.lastError) stream.errorMessage = row.lastError;
  if (row.deliveredThrough) stream.lastSyncedEventId = row.deliveredThrough;
  return stream;
}
