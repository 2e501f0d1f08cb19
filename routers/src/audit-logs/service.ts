import { newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Deps } from '../kernel/deps.ts';
import { ApiError, type FieldError, forbidden, invalid, invalidOfZod, notFound } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { inBatches } from '../lib/batches.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { loadOrganization, setAuditLogsRetention } from '../organizations/store.ts';
import type { LivePortalSession } from '../portal/store.ts';
import { quotaError, quotaLimit } from '../quotas.ts';
import { createPortalExport, getOrganizationAuditLogExport } from './exports/service.ts';
import {
  type AuditLogAction,
  type AuditLogEvent,
  type AuditLogSchema,
  type CreateAuditLogEventInput,
  type CreateAuditLogSchemaInput,
  type ListAuditLogActionsInput,
  type ListAuditLogEventsInput,
  type ListAuditLogSchemasInput,
  type MetadataSchema,
  PortalAuditLogFilters,
  PortalAuditLogQuery,
  RETENTION_DAYS,
  RETENTION_PERIODS,
  type UpdateAuditLogsRetentionInput,
} from './schemas.ts';
import {
  type AuditLogActionRow,
  type AuditLogEventRow,
  type AuditLogSchemaRow,
  bumpActionVersion,
  DEFAULT_RETENTION_DAYS,
  eventPrecheck,
  findActionByName,
  insertActionBelow,
  insertAuditLogEvent,
  insertAuditLogSchema,
  insertPlainAuditLogEvent,
  lockActionByName,
  pageOfAuditLogActions,
  pageOfAuditLogEvents,
  pageOfAuditLogSchemas,
  purgeExpiredAuditLogEvents,
  type SchemaRules,
} from './store.ts';

/** How far in the future an event's `occurred_at` may be (the contract's clock skew, 60 s). */
export const AUDIT_LOG_CLOCK_SKEW_MS = 60_000;
const DAY_MS = 86_400_000;

/** The single place that turns a schema row into its wire shape (absent parts stay absent). */
export function toAuditLogSchema(row: AuditLogSchemaRow): AuditLogSchema {
  const schema: AuditLogSchema = {
    object: 'audit_log_schema',
    version: row.version,
    targets: row.targets.map((t) => (t.metadata ? { type: t.type, metadata: t.metadata } : { type: t.type })),
    created_at: iso(row.createdAt),
  };
  if (row.actor) schema.actor = row.actor;
  if (row.metadata) schema.metadata = row.metadata;
  return schema;
}

export function toAuditLogAction(action: AuditLogActionRow, schema: AuditLogSchemaRow): AuditLogAction {
  return {
    object: 'audit_log_action',
    name: action.name,
    schema: toAuditLogSchema(schema),
    created_at: iso(action.createdAt),
    updated_at: iso(action.updatedAt),
  };
}

export function toAuditLogEvent(row: AuditLogEventRow): AuditLogEvent {
  const event: AuditLogEvent = {
    object: 'audit_log_event',
    id: row.id,
    organization_id: row.organizationId,
    action: row.action,
    occurred_at: iso(row.occurredAt),
    actor: row.actor,
    targets: row.targets,
    context: row.context,
    version: row.version,
    created_at: iso(row.createdAt),
  };
  if (row.metadata) event.metadata = row.metadata;
  return event;
}

/** Upstream's 400 for an event its action's schema refuses, naming each field (`/targets/0/type`). */
const invalidEvent = (errors: FieldError[]) =>
  new ApiError(400, 'invalid_audit_log_event', 'Invalid Audit Log event.', errors);

type Values = Record<string, string | number | boolean> | undefined;

/**
 * Checks `values` against a metadata schema: each declared property present (or only those of
 * `required`, when the schema lists them) and of its type; keys the schema does not declare are
 * refused when it declares any. Errors name the value's path under `path`.
 */
function checkMetadata(schema: MetadataSchema | Record<string, unknown>, values: Values, path: string): FieldError[] {
  const properties = ((schema as MetadataSchema).properties ?? {}) as Record<string, { type: string }>;
  const declared = Object.keys(properties);
  const required = (schema as MetadataSchema).required ?? declared;
  const errors: FieldError[] = [];
  const given = values ?? {};
  for (const key of required) {
    if (!Object.hasOwn(given, key)) {
      errors.push({ field: `${path}/${key}`, code: 'required', message: `${path}/${key} is required by the schema` });
    }
  }
  for (const [key, value] of Object.entries(given)) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!property) {
      if (declared.length > 0) {
        errors.push({ field: `${path}/${key}`, code: 'not_allowed', message: `${path}/${key} is not in the schema` });
      }
    } else if (typeof value !== property.type) {
      errors.push({
        field: `${path}/${key}`,
        code: 'invalid_type',
        message: `${path}/${key} must be a ${property.type}`,
      });
    }
  }
  return errors;
}

/** Every way the event breaks the schema (empty when it conforms). */
export function schemaViolations(schema: SchemaRules, event: CreateAuditLogEventInput['event']): FieldError[] {
  const errors: FieldError[] = [];
  const byType = new Map(schema.targets.map((t) => [t.type, t]));
  event.targets.forEach((target, i) => {
    const declared = byType.get(target.type);
    if (!declared) {
      errors.push({
        field: `/targets/${i}/type`,
        code: 'not_allowed',
        message: `/targets/${i}/type must be one of: ${[...byType.keys()].join(', ')}`,
      });
    } else if (declared.metadata) {
      errors.push(...checkMetadata(declared.metadata, target.metadata, `/targets/${i}/metadata`));
    }
  });
  for (const type of byType.keys()) {
    if (!event.targets.some((t) => t.type === type)) {
      errors.push({ field: '/targets', code: 'required', message: `/targets must hold a target of type ${type}` });
    }
  }
  if (schema.actor) errors.push(...checkMetadata(schema.actor.metadata, event.actor.metadata, '/actor/metadata'));
  if (schema.metadata) errors.push(...checkMetadata(schema.metadata, event.metadata, '/metadata'));
  return errors;
}

/**
 * `POST /audit_logs/events`: one INSERT statement when the action has no schema and the event is
 * in bounds; else one read (the organization's retention and the action's schema of the event's
 * version), then the INSERT once the event passes. No transaction, no row locked. Refused, storing nothing:
 * an unknown organization (404), an `occurred_at` more than the clock skew ahead or older than
 * the organization's retention (422), an event its action's schema refuses (400 with the paths).
 */
export async function createAuditLogEvent(scope: Scope, input: CreateAuditLogEventInput): Promise<{ success: true }> {
  const { event } = input;
  const version = event.version ?? 1;
  const now = scope.now();
  const occurredAt = new Date(event.occurred_at);
  const values = {
    id: newId('auditLogEvent'),
    env: scope.env.id,
    org: input.organization_id,
    action: event.action,
    occurredAt: occurredAt.toISOString(),
    actor: JSON.stringify(event.actor),
    targets: JSON.stringify(event.targets),
    context: JSON.stringify(event.context),
    metadata: event.metadata ? JSON.stringify(event.metadata) : null,
    version,
    at: now.toISOString(),
    // The request's Idempotency-Key, marked committed by the statement that writes the event.
    claim: scope.idempotency?.key ?? null,
  };
  // The common case (no schema for the action, the event in bounds) is one statement.
  if (await insertPlainAuditLogEvent(scope.db, values, AUDIT_LOG_CLOCK_SKEW_MS)) return { success: true };
  const check = await eventPrecheck(scope.db, scope.env.id, input.organization_id, event.action, version);
  if (!check) throw notFound('organization', input.organization_id);
  if (occurredAt.getTime() > now.getTime() + AUDIT_LOG_CLOCK_SKEW_MS) {
    throw invalid([
      { field: 'event.occurred_at', code: 'occurred_at_in_future', message: 'occurred_at may not be in the future.' },
    ]);
  }
  if (occurredAt.getTime() < now.getTime() - check.retentionDays * DAY_MS) {
    throw invalid([
      {
        field: 'event.occurred_at',
        code: 'occurred_at_outside_retention',
        message: `occurred_at is older than the organization's retention (${check.retentionDays} days).`,
      },
    ]);
  }
  if (check.latestVersion !== null) {
    if (!check.schema) {
      throw invalidEvent([
        { field: '/version', code: 'unknown_version', message: `${event.action} has no schema version ${version}` },
      ]);
    }
    const errors = schemaViolations(check.schema, event);
    if (errors.length > 0) throw invalidEvent(errors);
  }
  await insertAuditLogEvent(scope.db, values);
  return { success: true };
}

/**
 * `POST /audit_logs/actions/{actionName}/schemas`: the action's next version (1 for a new action).
 * Quotas: the environment's actions (a new action, under the environment's lock) and an action's
 * versions (under the action's row lock), both 422 `quota_exceeded`.
 */
export async function createAuditLogSchema(scope: Scope, input: CreateAuditLogSchemaInput): Promise<AuditLogSchema> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    let action = await lockActionByName(tx, scope.env.id, input.actionName);
    if (!action) {
      action = await insertActionBelow(
        tx,
        scope.env.id,
        {
          id: newId('auditLogAction'),
          environmentId: scope.env.id,
          name: input.actionName,
          createdAt: now,
          updatedAt: now,
        },
        quotaLimit(scope.deps, 'auditLogActionsPerEnvironment'),
      );
      if (!action) throw quotaError(scope.deps, 'auditLogActionsPerEnvironment');
    }
    if (action.latestVersion >= quotaLimit(scope.deps, 'auditLogSchemaVersionsPerAction')) {
      throw quotaError(scope.deps, 'auditLogSchemaVersionsPerAction');
    }
    const version = action.latestVersion + 1;
    await bumpActionVersion(tx, action.id, version, now);
    const values: Parameters<typeof insertAuditLogSchema>[1] = {
      id: newId('auditLogSchema'),
      environmentId: scope.env.id,
      actionId: action.id,
      version,
      targets: input.targets,
      createdAt: now,
    };
    if (input.actor) values.actor = input.actor;
    if (input.metadata) values.metadata = input.metadata;
    return toAuditLogSchema(await insertAuditLogSchema(tx, values));
  });
}

export async function listAuditLogActions(scope: Scope, input: z.infer<typeof ListAuditLogActionsInput>) {
  const page = await pageOfAuditLogActions(scope.db, scope.env.id, pageParams(input));
  return asList(page, (row) => toAuditLogAction(row.action, row.schema));
}

/** An action's schemas; 404 for an action the environment has no schema of. */
export async function listAuditLogSchemas(scope: Scope, input: z.infer<typeof ListAuditLogSchemasInput>) {
  const params = pageParams(input);
  const action = await findActionByName(scope.db, scope.env.id, input.actionName);
  if (!action) throw notFound('audit_log_action', input.actionName);
  return asList(await pageOfAuditLogSchemas(scope.db, scope.env.id, action.id, params), toAuditLogSchema);
}

/** The organization's retention in days (404 for one of another environment). */
async function retentionOf(scope: Scope, organizationId: string): Promise<number> {
  return (await loadOrganization(scope.db, scope.env.id, organizationId)).auditLogsRetentionDays;
}

export async function getAuditLogsRetention(scope: Scope, organizationId: string) {
  return { retention_period_in_days: await retentionOf(scope, organizationId) };
}

/**
 * `PUT /organizations/{id}/audit_logs_retention`: upstream's `retention_period_in_days` (30 ... 330
 * by 30, 365 ... 3650 by 365) or the SDK's `retention_period` (`1_MONTH` ... `10_YEARS`), one of them.
 */
export async function updateAuditLogsRetention(scope: Scope, input: z.infer<typeof UpdateAuditLogsRetentionInput>) {
  const field = input.retention_period !== undefined ? 'retention_period' : 'retention_period_in_days';
  const days =
    input.retention_period !== undefined
      ? Object.hasOwn(RETENTION_PERIODS, input.retention_period)
        ? RETENTION_PERIODS[input.retention_period]
        : undefined
      : input.retention_period_in_days;
  if (input.retention_period !== undefined && input.retention_period_in_days !== undefined) {
    throw invalid([
      { field, code: 'invalid', message: 'Send retention_period_in_days or retention_period, not both.' },
    ]);
  }
  if (days === undefined || !RETENTION_DAYS.includes(days)) {
    throw invalid([
      {
        field,
        code: days === undefined && input.retention_period === undefined ? 'required' : 'invalid',
        message:
          'The retention is 30 to 330 days in steps of 30 or 365 to 3650 in steps of 365 (1_MONTH ... 11_MONTHS, 1_YEAR ... 10_YEARS).',
      },
    ]);
  }
  const row = await setAuditLogsRetention(scope.db, scope.env.id, input.id, days, scope.now());
  if (!row) throw notFound('organization', input.id);
  return { retention_period_in_days: row.auditLogsRetentionDays };
}

/** `GET /organizations/{id}/audit_log_configuration`: the retention; no log stream exists yet. */
export async function getAuditLogConfiguration(scope: Scope, organizationId: string) {
  const days = await retentionOf(scope, organizationId);
  return { organization_id: organizationId, retention_period_in_days: days, state: 'active' as const };
}

/** The console's view of an organization's events: newest recorded first, optionally of one action. */
export async function listAuditLogEvents(scope: Scope, input: z.infer<typeof ListAuditLogEventsInput>) {
  const params = pageParams(input);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  const page = await pageOfAuditLogEvents(scope.db, scope.env.id, organization.id, { action: input.action }, params);
  return asList(page, toAuditLogEvent);
}

/** The retention sweep's part: events past their organization's retention, in batches; how many went. */
export async function purgeExpiredAuditLogs(deps: Scope['deps'], batchSize = 5_000): Promise<number> {
  const now = deps.now();
  return inBatches(batchSize, (size) => purgeExpiredAuditLogEvents(deps.db, now, size));
}

export { DEFAULT_RETENTION_DAYS };

// The portal's `audit_logs` page: the session's organization's events, read and exported with the
// same rules as the API (an export is `POST /audit_logs/exports` of the page's filters).

const scopeOfSession = (deps: Deps, live: LivePortalSession): Scope => ({
  db: deps.db,
  env: live.env,
  now: deps.now,
  deps,
});

function requireAuditLogsSession(live: LivePortalSession): string {
  if (live.session.intent !== 'audit_logs') {
    throw forbidden('forbidden', 'This admin portal session may not read the audit logs.');
  }
  return live.session.organizationId;
}

/** The filters, checked (422 naming the field): a range's start may not be after its end. */
function checkedFilters<T extends z.ZodType<PortalAuditLogFilters>>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw invalidOfZod(parsed.error);
  const { range_start, range_end } = parsed.data;
  if (range_start && range_end && new Date(range_start).getTime() > new Date(range_end).getTime()) {
    throw invalid([{ field: 'range_start', code: 'invalid_range', message: 'range_start is after range_end.' }]);
  }
  return parsed.data;
}

/** The `audit_logs` page's table: the organization's events, newest recorded first, filtered and paged. */
export async function portalAuditLogEvents(deps: Deps, live: LivePortalSession, query: unknown) {
  const organizationId = requireAuditLogsSession(live);
  const input = checkedFilters(PortalAuditLogQuery, query);
  const params = pageParams({ ...input, limit: input.limit ?? 10, order: 'desc' });
  const filters = {
    action: input.action,
    actorId: input.actor_id,
    actorName: input.actor_name,
    from: input.range_start ? new Date(input.range_start) : undefined,
    to: input.range_end ? new Date(input.range_end) : undefined,
  };
  const page = await pageOfAuditLogEvents(deps.db, live.env.id, organizationId, filters, params);
  return asList(page, toAuditLogEvent);
}

/**
 * The page's "Export CSV": an export of the page's filters through the exports service (its rules:
 * a range older than the retention or backwards is 400; at most `PORTAL_PENDING_EXPORTS` pending).
 * Without a range it covers all the organization keeps: from its retention's start (a minute in,
 * so the check passes) to now.
 */
export async function createPortalAuditLogExport(deps: Deps, live: LivePortalSession, body: unknown) {
  const organizationId = requireAuditLogsSession(live);
  const filters = checkedFilters(PortalAuditLogFilters, body);
  const scope = scopeOfSession(deps, live);
  const now = scope.now();
  const days = await retentionOf(scope, organizationId);
  const earliest = new Date(now.getTime() - days * DAY_MS + 60_000);
  // Built field by field: an object literal of several spreads is kept alive by V8 (tests/src/patches).
  const input: Parameters<typeof createPortalExport>[1] = {
    organization_id: organizationId,
    range_start: filters.range_start ?? iso(earliest),
    range_end: filters.range_end ?? iso(now),
  };
  if (filters.action) input.actions = [filters.action];
  if (filters.actor_id) input.actor_ids = [filters.actor_id];
  if (filters.actor_name) input.actor_names = [filters.actor_name];
  return createPortalExport(scope, input);
}

/** The page's poll of an export it made: pending, ready (with the signed download link) or error. */
export function portalAuditLogExport(deps: Deps, live: LivePortalSession, id: string) {
  const organizationId = requireAuditLogsSession(live);
  return getOrganizationAuditLogExport(scopeOfSession(deps, live), organizationId, id);
}
