import { AUDIT_LOG_STREAM_TYPES } from '@atrium/db';
import { z } from 'zod';
import { WIDGET_STREAM_STATES, widgetAuditLogStream } from '../../audit-logs/streams/service.ts';
import { clientProcedure } from '../../trpc.ts';
import { createPortalLinkForClient } from '../admin-portal/service.ts';

/** WIDGETS-API.md §2, row 19: "Add domain" and "Manage" open a portal link. */
export const adminPortalWidgetProcedures = {
  generateAdminPortalLink: clientProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/_widgets/admin-portal/generate-link',
        tags: ['Widgets'],
        summary: "A single-use admin portal link for the caller's organization",
      },
      successStatus: 201,
      queryInput: true,
    })
    .input(z.object({ intent: z.string().max(64) }))
    .output(z.object({ link: z.string() }))
    .mutation(async ({ ctx, input }) => ({ link: (await createPortalLinkForClient(ctx.scope, input.intent)).link })),
  /**
   * AdminPortalAuditLogStreaming (issue #38): the organization's log stream, `{}` when it has none;
   * "Configure" / "Manage" asks `generate-link` for intent `log_streams`.
   */
  auditLogStream: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/admin-portal/audit-log-stream',
        tags: ['Widgets'],
        summary: "The organization's audit log stream (AdminPortalAuditLogStreaming)",
      },
    })
    .input(z.object({}))
    .output(
      z.union([
        z.object({
          id: z.string(),
          state: z.enum(WIDGET_STREAM_STATES),
          type: z.enum(AUDIT_LOG_STREAM_TYPES),
          errorMessage: z.string().optional(),
          lastSyncedEventId: z.string().optional(),
          auditLogTrailId: z.string(),
        }),
        z.object({}).strict(),
      ]),
    )
    .query(({ ctx }) => widgetAuditLogStream(ctx.scope)),
};
