import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { listUserOrganizations } from '../organizations/service.ts';

const OrganizationInfo = z.object({
  id: z.string(),
  name: z.string(),
  current: z.boolean(),
  favicon: z.string().nullable(),
});

/** OrganizationSwitcher (WIDGETS-API.md §2, row 9). */
export const organizationsWidgetProcedures = {
  organizations: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/UserManagement/organizations',
        tags: ['Widgets'],
        summary: "The caller's organizations (OrganizationSwitcher)",
      },
    })
    .input(z.object({}))
    .output(z.object({ data: z.array(OrganizationInfo) }))
    .query(async ({ ctx }) => ({
      data: (await listUserOrganizations(ctx.scope)).map((o) => ({ ...o, favicon: null })),
    })),
};
