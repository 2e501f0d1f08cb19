import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import { listUserOrganizations } from './service.ts';

const OrganizationInfo = z.object({
  id: z.string(),
  name: z.string(),
  current: z.boolean(),
  favicon: z.string().nullable(),
});

/** REST for the official widgets (`/_widgets/…`, WIDGETS-API.md §2, row 9). */
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

/** Typed tRPC for frontends (`client.*`), the same operations as GraphQL. */
export const organizationsClientProcedures = {
  organizations: clientProcedure
    .output(z.array(z.object({ id: z.string(), name: z.string(), isCurrent: z.boolean() })))
    .query(async ({ ctx }) =>
      (await listUserOrganizations(ctx.scope)).map((o) => ({ id: o.id, name: o.name, isCurrent: o.current })),
    ),
};

const UserOrganization = builder
  .objectRef<{ id: string; name: string; current: boolean }>('UserOrganization')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      isCurrent: t.exposeBoolean('current'),
    }),
  });

builder.queryField('organizations', (t) =>
  t.field({ type: [UserOrganization], resolve: (_root, _args, ctx) => listUserOrganizations(ctx.scope) }),
);
