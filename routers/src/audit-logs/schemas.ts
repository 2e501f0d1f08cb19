import { z } from 'zod';
import { Id, ListParams, listOf, StrictInt, Timestamp } from '../common/schemas.ts';

/** An unpaired surrogate (in `u` mode a pair is one code point, so only a lone half matches). */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
/**
 * Text an event stores: refused here, naming its field, rather than by the INSERT, which would
 * fail every other event written in the same statement (store.ts `insertPlainEvents`).
 */
const storable = (text: z.ZodString) =>
  text.refine(
    // Text PostgreSQL refuses in jsonb (and a NUL in text as well).
    (value) => !value.includes('\u0000') && !UNPAIRED_SURROGATE.test(value),
    'may not contain U+0000 or an unpaired surrogate',
  );

/** Upstream's metadata of an actor, a target or an event: at most 50 keys of scalar values. */
const METADATA_KEY = /^[a-zA-Z0-9_-]{0,40}$/;
export const AuditLogMetadata = z
  .record(
    z.string().regex(METADATA_KEY, 'a metadata key is at most 40 letters, digits, _ and -'),
    z.union([storable(z.string().max(500)), z.number(), z.boolean()]),
  )
  .refine((value) => Object.keys(value).length <= 50, { message: 'metadata may hold at most 50 keys' });

const AuditLogEntity = z.object({
  id: storable(z.string().min(1).max(256)),
  type: storable(z.string().min(1).max(256)),
  name: storable(z.string().max(256)).optional(),
  metadata: AuditLogMetadata.optional(),
});

/** An action name (`user.signed_in`): letters, digits and `_ . : -`. */
export const ActionName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'an action is letters, digits and _ . : -');

/** `POST /audit_logs/events`: upstream's AuditLogEventIngestionDto. */
export const CreateAuditLogEventInput = z.object({
  organization_id: storable(Id),
  event: z.object({
    action: ActionName,
    occurred_at: z.iso.datetime({ offset: true }),
    actor: AuditLogEntity,
    targets: z.array(AuditLogEntity).max(100),
    context: z.object({
      location: storable(z.string().max(256)),
      user_agent: storable(z.string().max(1024)).optional(),
    }),
    metadata: AuditLogMetadata.optional(),
    version: z.number().int().min(1).pipe(z.number().int()).optional(),
  }),
});
export type CreateAuditLogEventInput = z.infer<typeof CreateAuditLogEventInput>;

export const AuditLogEventCreated = z.object({ success: z.literal(true) }).meta({ id: 'AuditLogEventCreateResponse' });

/**
 * A JSON schema of metadata as upstream writes it (`{type: 'object', properties: {key: {type}}}`),
 * each property a string, a number or a boolean; `required` narrows which must be present.
 */
export const MetadataSchema = z.object({
  type: z.literal('object').optional(),
  properties: z
    .record(z.string().regex(METADATA_KEY), z.object({ type: z.enum(['string', 'number', 'boolean']) }))
    .refine((value) => Object.keys(value).length <= 50, { message: 'a schema may declare at most 50 keys' })
    .optional(),
  required: z.array(z.string().max(40)).max(50).optional(),
});
export type MetadataSchema = z.infer<typeof MetadataSchema>;

/** `POST /audit_logs/actions/{actionName}/schemas`: upstream's AuditLogSchemaDto. */
export const CreateAuditLogSchemaInput = z.object({
  actionName: ActionName,
  actor: z.object({ metadata: MetadataSchema }).optional(),
  targets: z
    .array(z.object({ type: z.string().min(1).max(256), metadata: MetadataSchema.optional() }))
    .min(1)
    .max(50),
  metadata: MetadataSchema.optional(),
});
export type CreateAuditLogSchemaInput = z.infer<typeof CreateAuditLogSchemaInput>;

/** One version of an action's schema (upstream's AuditLogSchemaJson); absent parts are absent. */
export const AuditLogSchema = z
  .object({
    object: z.literal('audit_log_schema'),
    version: z.number().int(),
    actor: z.object({ metadata: z.record(z.string(), z.unknown()) }).optional(),
    targets: z.array(z.object({ type: z.string(), metadata: z.record(z.string(), z.unknown()).optional() })),
    metadata: z.record(z.string(), z.unknown()).optional(),
    created_at: Timestamp,
  })
  .meta({ id: 'AuditLogSchema' });
export type AuditLogSchema = z.infer<typeof AuditLogSchema>;

/** An action with its newest schema (upstream's AuditLogActionJson). */
export const AuditLogAction = z
  .object({
    object: z.literal('audit_log_action'),
    name: z.string(),
    schema: AuditLogSchema,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'AuditLogAction' });
export type AuditLogAction = z.infer<typeof AuditLogAction>;

export const AuditLogActionList = listOf(AuditLogAction);
export const AuditLogSchemaList = listOf(AuditLogSchema);

export const ListAuditLogActionsInput = ListParams;
export const ListAuditLogSchemasInput = ListParams.extend({ actionName: ActionName });

export const OrganizationIdInput = z.object({ id: Id });

/** Upstream's retention values: 30 to 330 days in steps of 30, 365 to 3650 in steps of 365. */
export const RETENTION_DAYS: readonly number[] = [
  ...Array.from({ length: 11 }, (_, i) => 30 * (i + 1)),
  ...Array.from({ length: 10 }, (_, i) => 365 * (i + 1)),
];
/** The SDK's names of the same periods: `1_MONTH` ... `11_MONTHS`, `1_YEAR` ... `10_YEARS`. */
export const RETENTION_PERIODS: Readonly<Record<string, number>> = Object.fromEntries([
  ...Array.from({ length: 11 }, (_, i) => [i === 0 ? '1_MONTH' : `${i + 1}_MONTHS`, 30 * (i + 1)]),
  ...Array.from({ length: 10 }, (_, i) => [i === 0 ? '1_YEAR' : `${i + 1}_YEARS`, 365 * (i + 1)]),
]);

export const AuditLogsRetention = z
  .object({ retention_period_in_days: z.number().int().nullable() })
  .meta({ id: 'AuditLogsRetention' });

/** Either upstream's `retention_period_in_days` or the SDK's `retention_period` (`1_MONTH`, ...). */
export const UpdateAuditLogsRetentionInput = z.object({
  id: Id,
  retention_period_in_days: StrictInt.optional(),
  retention_period: z.string().max(16).optional(),
});

export const AuditLogConfiguration = z
  .object({
    organization_id: z.string(),
    retention_period_in_days: z.number().int(),
    state: z.enum(['active', 'inactive', 'disabled']),
  })
  .meta({ id: 'AuditLogConfiguration' });

/** An event as the console shows it (no REST read of events exists upstream but exports). */
export const AuditLogEvent = z
  .object({
    object: z.literal('audit_log_event'),
    id: z.string(),
    organization_id: z.string(),
    action: z.string(),
    occurred_at: Timestamp,
    actor: AuditLogEntity,
    targets: z.array(AuditLogEntity),
    context: z.object({ location: z.string(), user_agent: z.string().optional() }),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    version: z.number().int(),
    created_at: Timestamp,
  })
  .meta({ id: 'AuditLogEvent' });
export type AuditLogEvent = z.infer<typeof AuditLogEvent>;

export const ListAuditLogEventsInput = ListParams.extend({
  organization_id: Id,
  action: ActionName.optional(),
});

/**
 * The portal's audit_logs page filters (a query string when listing, a JSON body when exporting):
 * one action, an actor by id and/or by name, and an `occurred_at` range (both ends included).
 */
export const PortalAuditLogFilters = z.object({
  action: ActionName.optional(),
  actor_id: z.string().min(1).max(256).optional(),
  actor_name: z.string().min(1).max(256).optional(),
  range_start: z.iso.datetime({ offset: true }).optional(),
  range_end: z.iso.datetime({ offset: true }).optional(),
});
export type PortalAuditLogFilters = z.infer<typeof PortalAuditLogFilters>;

/** The audit_logs page's list: its filters and a page, newest recorded first. */
export const PortalAuditLogQuery = PortalAuditLogFilters.extend(
  ListParams.pick({ limit: true, after: true, before: true }).shape,
);
