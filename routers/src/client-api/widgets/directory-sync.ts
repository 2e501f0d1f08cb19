import { DIRECTORY_STATES, DIRECTORY_TYPES } from '@atrium/db';
import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { getWidgetDirectory, listWidgetDirectories } from '../directory-sync/service.ts';

const tags = ['Widgets'];

/** `Directory` as the DirectorySync widget reads it (`@workos-inc/widgets` 1.18). */
const WidgetDirectory = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(DIRECTORY_TYPES),
  state: z.enum(DIRECTORY_STATES),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastSyncRunAt: z.string().nullable(),
  metadata: z.object({
    users: z.object({ active: z.number().int(), inactive: z.number().int() }),
    groups: z.number().int(),
  }),
});

/** The DirectorySync widget (issue #36): its two reads, scope `widgets:dsync:manage`. */
export const directorySyncWidgetProcedures = {
  directories: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/directory-sync/directories',
        tags,
        summary: "The organization's directories and the admin portal link (DirectorySync)",
      },
    })
    .input(z.object({}))
    .output(z.object({ data: z.array(WidgetDirectory), link: z.string() }))
    .query(({ ctx }) => listWidgetDirectories(ctx.scope)),

  directory: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/directory-sync/directories/{directoryId}',
        tags,
        summary: 'One directory of the organization (DirectorySync)',
      },
    })
    .input(z.object({ directoryId: Id }))
    .output(WidgetDirectory)
    .query(({ ctx, input }) => getWidgetDirectory(ctx.scope, input.directoryId)),
};
