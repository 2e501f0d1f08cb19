import { z } from 'zod';
import { iso } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import { createPortalLinkForClient } from './service.ts';

/** REST for the official widgets (WIDGETS-API.md §2, row 19): "Add domain" and "Manage" open a portal link. */
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
};

const ClientIntent = z.enum(['DomainVerification', 'Sso', 'LogStreams']);
type ClientIntent = z.infer<typeof ClientIntent>;
const REST_INTENT: Record<ClientIntent, string> = {
  DomainVerification: 'domain_verification',
  Sso: 'sso',
  LogStreams: 'log_streams',
};
const CLIENT_INTENT: Record<string, ClientIntent> = {
  domain_verification: 'DomainVerification',
  sso: 'Sso',
};

/** `createAdminPortalLink` for both client surfaces: the GraphQL shape (`AdminPortalLink`). */
async function createLink(scope: Parameters<typeof createPortalLinkForClient>[0], intent: ClientIntent) {
  const issued = await createPortalLinkForClient(scope, REST_INTENT[intent]);
  return { link: issued.link, intent: CLIENT_INTENT[issued.intent] as ClientIntent, expiresAt: iso(issued.expiresAt) };
}

/** Typed tRPC for frontends: `client.adminPortal.createLink`. */
export const adminPortalClientProcedures = {
  createLink: clientProcedure
    .input(z.object({ intent: ClientIntent }))
    .output(z.object({ link: z.string(), intent: ClientIntent, expiresAt: z.string() }))
    .mutation(({ ctx, input }) => createLink(ctx.scope, input.intent)),
};

const AdminPortalLinkIntent = builder.enumType('AdminPortalLinkIntent', { values: ClientIntent.options });

const AdminPortalLink = builder
  .objectRef<{ link: string; intent: ClientIntent; expiresAt: string }>('AdminPortalLink')
  .implement({
    fields: (t) => ({
      link: t.exposeString('link'),
      intent: t.expose('intent', { type: AdminPortalLinkIntent }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    }),
  });

builder.mutationField('createAdminPortalLink', (t) =>
  t.field({
    type: AdminPortalLink,
    args: { intent: t.arg({ type: AdminPortalLinkIntent, required: true }) },
    resolve: (_root, args, ctx) => createLink(ctx.scope, args.intent),
  }),
);
