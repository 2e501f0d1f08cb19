import { sql } from 'drizzle-orm';
import { customType, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';

/**
 * A PostgreSQL 64-bit transaction id (`xid8`), read as its decimal text. Log streams deliver an
 * event only once its transaction is older than every transaction still running, so a cursor
 * on (tx_id, id) never passes an event that commits later (routers/src/audit-logs/streams/).
 */
const xid8 = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'xid8';
  },
});

/** An event's actor or one of its targets, as the caller sent it (upstream's shape). */
export interface AuditLogEntity {
  id: string;
  type: string;
  name?: string;
  metadata?: Record<string, string | number | boolean>;
}

/** Where the action happened: `location` (an IP address or a place) and the user agent. */
export interface AuditLogContext {
  location: string;
  user_agent?: string;
}

/** A JSON schema of metadata as upstream writes it: `{type: 'object', properties: {key: {type}}}`. */
export type AuditLogMetadataSchema = Record<string, unknown>;

/**
 * The audit log events an application records for an organization (`POST /audit_logs/events`).
 * Append-only: no statement of the API updates or deletes a row; the retention sweep deletes a
 * row once it is older than its organization's retention (routers/src/audit-logs/).
 *
 * No foreign key to the organization: a create stays one INSERT that locks no other row (a
 * foreign key takes KEY SHARE on the organization's row), and deleting an organization does not
 * delete its trail before its retention ends (the sweep then applies the default retention).
 */
// @owner routers/src/audit-logs
export const auditLogEvents = pgTable(
  'audit_log_events',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id').notNull(),
    action: text('action').notNull(),
    occurredAt: ts('occurred_at').notNull(),
    actor: jsonb('actor').$type<AuditLogEntity>().notNull(),
    targets: jsonb('targets').$type<AuditLogEntity[]>().notNull(),
    context: jsonb('context').$type<AuditLogContext>().notNull(),
    metadata: jsonb('metadata').$type<Record<string, string | number | boolean>>(),
    /** The schema version the event names (1 when it names none). */
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** The writing transaction (`pg_current_xact_id()`): the log streams' commit-order watermark. */
    txId: xid8('tx_id').notNull().default(sql`pg_current_xact_id()`),
  },
  (t) => [
    index('audit_log_events_stream_idx').on(t.environmentId, t.organizationId, t.txId, t.id),
    index('audit_log_events_organization_idx').on(t.environmentId, t.organizationId, t.occurredAt, t.id),
    index('audit_log_events_organization_id_idx').on(t.environmentId, t.organizationId, t.id),
    index('audit_log_events_occurred_at_idx').on(t.occurredAt),
  ],
);

/** The actions of an environment that have schemas (`POST /audit_logs/actions/{action}/schemas`). */
// @owner routers/src/audit-logs
export const auditLogActions = pgTable(
  'audit_log_actions',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    name: text('name').notNull(),
    /** The newest schema's version: bumped by each schema create, under this row's lock. */
    latestVersion: integer('latest_version').notNull().default(0),
    ...timestamps,
  },
  (t) => [uniqueIndex('audit_log_actions_environment_name_unique').on(t.environmentId, t.name)],
);

/** The versions of an action's schema (1, 2, ...): JSON schemas of its targets, actor and metadata. */
// @owner routers/src/audit-logs
export const auditLogSchemas = pgTable(
  'audit_log_schemas',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    actionId: idText('action_id')
      .notNull()
      .references(() => auditLogActions.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    /** `{metadata: <schema>}` or null when the schema says nothing of the actor. */
    actor: jsonb('actor').$type<{ metadata: AuditLogMetadataSchema }>(),
    targets: jsonb('targets')
      .$type<{ type: string; metadata?: AuditLogMetadataSchema }[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    metadata: jsonb('metadata').$type<AuditLogMetadataSchema>(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('audit_log_schemas_action_version_unique').on(t.actionId, t.version)],
);

/** Upstream's log stream destinations (the `AdminPortalAuditLogStreaming` widget's `type`). */
export const AUDIT_LOG_STREAM_TYPES = [
  'GenericHttps',
  'Datadog',
  'Splunk',
  'S3',
  'GoogleCloudStorage',
  'AzureSentinel',
] as const;
export type AuditLogStreamType = (typeof AUDIT_LOG_STREAM_TYPES)[number];

/** `active` delivers; `inactive` is paused by the IT admin; `error` failed past its retries; `invalid` was refused by the destination (credentials). */
export const AUDIT_LOG_STREAM_STATES = ['active', 'inactive', 'error', 'invalid'] as const;
export type AuditLogStreamState = (typeof AUDIT_LOG_STREAM_STATES)[number];

/**
 * An organization's one log stream (issue #38): where its audit log events are delivered, set up
 * by its IT admin in the portal's `log_streams` intent. `config` holds the destination's public
 * settings (URL, region, bucket…), `credentials` its secrets as sealed JSON under the master key.
 * The delivery worker keeps its place in `delivered_through` and its attempt state beside it,
 * as the webhook deliveries do (`next_attempt_at` doubles as the lease of an attempt in flight).
 */
// @owner routers/src/audit-logs
export const auditLogStreams = pgTable(
  'audit_log_streams',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    type: text('type').$type<AuditLogStreamType>().notNull(),
    state: text('state').$type<AuditLogStreamState>().notNull().default('active'),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    /** Sealed JSON of the destination's secrets (`v1.<iv>.<tag>.<ciphertext>`), null when it has none. */
    credentials: text('credentials'),
    /** The id of the last audit log event delivered (the cursor), null before the first. */
    deliveredThrough: idText('delivered_through'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    lastAttemptAt: ts('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    /** What the widget shows as `errorMessage`: the last failure, without any secret. */
    lastError: text('last_error'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('audit_log_streams_organization_unique').on(t.environmentId, t.organizationId),
    index('audit_log_streams_due_idx').on(t.environmentId, t.nextAttemptAt, t.id).where(sql`${t.state} = 'active'`),
  ],
);

/** Raw bytes (`bytea`): PGlite reads a Uint8Array, postgres.js a Buffer; the store reads both as bytes. */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return 'bytea';
  },
});

/** The filters of an export, as the caller sent them (upstream's AuditLogExportCreationDto). */
export interface AuditLogExportFilters {
  actions?: string[];
  actor_names?: string[];
  actor_ids?: string[];
  targets?: string[];
}

/** `pending` until the worker builds it; `ready` with its CSV in parts; `error` with a reason. */
export const AUDIT_LOG_EXPORT_STATES = ['pending', 'ready', 'error'] as const;
export type AuditLogExportState = (typeof AUDIT_LOG_EXPORT_STATES)[number];

/**
 * An export of an organization's events (`POST /audit_logs/exports`), built by the export worker
 * into `audit_log_export_parts`. `lease_until` is the lease of a build in flight (a second worker
 * skips it until it passes); `attempts` counts the builds begun, and the parts a build writes are
 * tagged with its attempt, so a build that lost its lease never mixes its parts with the winner's.
 */
// @owner routers/src/audit-logs
export const auditLogExports = pgTable(
  'audit_log_exports',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    state: text('state').$type<AuditLogExportState>().notNull().default('pending'),
    rangeStart: ts('range_start').notNull(),
    rangeEnd: ts('range_end').notNull(),
    filters: jsonb('filters').$type<AuditLogExportFilters>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: ts('lease_until'),
    /** The attempt whose parts are the CSV (set when ready). */
    readyAttempt: integer('ready_attempt'),
    rowCount: integer('row_count'),
    byteCount: integer('byte_count'),
    partCount: integer('part_count'),
    /** Why the export is in `error` (no secret, no SQL). */
    error: text('error'),
    ...timestamps,
  },
  (t) => [
    index('audit_log_exports_environment_idx').on(t.environmentId, t.id),
    index('audit_log_exports_pending_idx').on(t.leaseUntil, t.id).where(sql`${t.state} = 'pending'`),
    // The retention sweep's: finished exports by when they finished.
    index('audit_log_exports_finished_idx').on(t.updatedAt).where(sql`${t.state} <> 'pending'`),
  ],
);

/** The CSV of an export in parts of about 1 MiB, in order of `seq`, per build attempt. */
// @owner routers/src/audit-logs
export const auditLogExportParts = pgTable(
  'audit_log_export_parts',
  {
    exportId: idText('export_id')
      .notNull()
      .references(() => auditLogExports.id, { onDelete: 'cascade' }),
    environmentId: environmentIdColumn(),
    attempt: integer('attempt').notNull(),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.exportId, t.attempt, t.seq] })],
);
