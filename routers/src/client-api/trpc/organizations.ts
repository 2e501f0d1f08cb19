import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { ClientOrganization } from '../organization/schemas.ts';
import { authenticationSettings, clientSettings, getOwnOrganization } from '../organization/service.ts';
import { listUserOrganizations } from '../organizations/service.ts';

/** `client.organizations`, `client.organization` and the deployment's settings, as GraphQL answers them. */
export const organizationsClientProcedures = {
  organizations: clientProcedure
    .output(z.array(z.object({ id: z.string(), name: z.string(), isCurrent: z.boolean() })))
    .query(async ({ ctx }) =>
      (await listUserOrganizations(ctx.scope)).map((o) => ({ id: o.id, name: o.name, isCurrent: o.current })),
    ),
  organization: clientProcedure
    .input(z.object({ id: Id }))
    .output(ClientOrganization)
    .query(({ ctx, input }) => getOwnOrganization(ctx.scope, input.id)),
  branding: clientProcedure
    .output(z.object({ displayName: z.string() }))
    .query(({ ctx }) => ({ displayName: clientSettings(ctx.scope).teamName })),
  authkitSettings: clientProcedure
    .output(z.object({ origin: z.string() }))
    .query(({ ctx }) => ({ origin: clientSettings(ctx.scope).authkitOrigin })),
  authenticationSettings: clientProcedure.query(({ ctx }) => authenticationSettings(ctx.scope)),
};
