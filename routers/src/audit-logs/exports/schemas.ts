import { z } from 'zod';
import { Id, Timestamp } from '../../common/schemas.ts';

const FilterList = z.array(z.string().min(1).max(256)).max(100);

/** `POST /audit_logs/exports`: upstream's AuditLogExportCreationDto (`actors` is the deprecated `actor_names`). */
export const CreateAuditLogExportInput = z.object({
  organization_id: Id,
  range_start: z.iso.datetime({ offset: true }),
  range_end: z.iso.datetime({ offset: true }),
  actions: FilterList.optional(),
  actors: FilterList.optional(),
  actor_names: FilterList.optional(),
  actor_ids: FilterList.optional(),
  targets: FilterList.optional(),
});
export type CreateAuditLogExportInput = z.infer<typeof CreateAuditLogExportInput>;

export const GetAuditLogExportInput = z.object({ auditLogExportId: Id });

/** Upstream's AuditLogExportJson: `url` only when ready (absent otherwise, never null). */
export const AuditLogExport = z
  .object({
    object: z.literal('audit_log_export'),
    id: z.string(),
    state: z.enum(['pending', 'ready', 'error']),
    url: z.string().optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'AuditLogExport' });
export type AuditLogExport = z.infer<typeof AuditLogExport>;
