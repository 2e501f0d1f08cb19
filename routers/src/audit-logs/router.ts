import { apiProcedure, router } from '../trpc.ts';
import { AuditLogExport, CreateAuditLogExportInput, GetAuditLogExportInput } from './exports/schemas.ts';
import { createAuditLogExport, getAuditLogExport } from './exports/service.ts';
import {
  AuditLogActionList,
  AuditLogConfiguration,
  AuditLogEventCreated,
  AuditLogSchema,
  AuditLogSchemaList,
  AuditLogsRetention,
  CreateAuditLogEventInput,
  CreateAuditLogSchemaInput,
  ListAuditLogActionsInput,
  ListAuditLogSchemasInput,
  OrganizationIdInput,
  UpdateAuditLogsRetentionInput,
} from './schemas.ts';
import {
  createAuditLogEvent,
  createAuditLogSchema,
  getAuditLogConfiguration,
  getAuditLogsRetention,
  listAuditLogActions,
  listAuditLogSchemas,
  updateAuditLogsRetention,
} from './service.ts';

const tags = ['Audit logs'];
const schemas = '/audit_logs/actions/{actionName}/schemas';

/**
 * Upstream's audit-logs API at its paths (the SDK's `auditLogs` module), log streams excepted. Events are append-only: no procedure here or anywhere updates or deletes one.
 */
export const auditLogsRouter = router({
  events: router({
    create: apiProcedure
      .meta({ openapi: { method: 'POST', path: '/audit_logs/events', tags, summary: 'Create an audit log event' } })
      .input(CreateAuditLogEventInput)
      .output(AuditLogEventCreated)
      .mutation(({ ctx, input }) => createAuditLogEvent(ctx.scope, input)),
  }),

  exports: router({
    create: apiProcedure
      .meta({
        openapi: { method: 'POST', path: '/audit_logs/exports', tags, summary: 'Create an export' },
        successStatus: 201,
      })
      .input(CreateAuditLogExportInput)
      .output(AuditLogExport)
      .mutation(({ ctx, input }) => createAuditLogExport(ctx.scope, input)),
    get: apiProcedure
      .meta({
        openapi: { method: 'GET', path: '/audit_logs/exports/{auditLogExportId}', tags, summary: 'Get an export' },
      })
      .input(GetAuditLogExportInput)
      .output(AuditLogExport)
      .query(({ ctx, input }) => getAuditLogExport(ctx.scope, input.auditLogExportId)),
  }),

  actions: router({
    list: apiProcedure
      .meta({ openapi: { method: 'GET', path: '/audit_logs/actions', tags, summary: 'List audit log actions' } })
      .input(ListAuditLogActionsInput)
      .output(AuditLogActionList)
      .query(({ ctx, input }) => listAuditLogActions(ctx.scope, input)),
  }),

  schemas: router({
    create: apiProcedure
      .meta({
        openapi: { method: 'POST', path: schemas, tags, summary: "Create a version of an action's schema" },
        successStatus: 201,
      })
      .input(CreateAuditLogSchemaInput)
      .output(AuditLogSchema)
      .mutation(({ ctx, input }) => createAuditLogSchema(ctx.scope, input)),
    list: apiProcedure
      .meta({ openapi: { method: 'GET', path: schemas, tags, summary: "List an action's schemas" } })
      .input(ListAuditLogSchemasInput)
      .output(AuditLogSchemaList)
      .query(({ ctx, input }) => listAuditLogSchemas(ctx.scope, input)),
  }),

  retention: router({
    get: apiProcedure
      .meta({
        openapi: { method: 'GET', path: '/organizations/{id}/audit_logs_retention', tags, summary: 'Get retention' },
      })
      .input(OrganizationIdInput)
      .output(AuditLogsRetention)
      .query(({ ctx, input }) => getAuditLogsRetention(ctx.scope, input.id)),
    update: apiProcedure
      .meta({
        openapi: { method: 'PUT', path: '/organizations/{id}/audit_logs_retention', tags, summary: 'Set retention' },
      })
      .input(UpdateAuditLogsRetentionInput)
      .output(AuditLogsRetention)
      .mutation(({ ctx, input }) => updateAuditLogsRetention(ctx.scope, input)),
  }),

  configuration: router({
    get: apiProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: '/organizations/{id}/audit_log_configuration',
          tags,
          summary: "Get an organization's audit log configuration",
        },
      })
      .input(OrganizationIdInput)
      .output(AuditLogConfiguration)
      .query(({ ctx, input }) => getAuditLogConfiguration(ctx.scope, input.id)),
  }),
});
