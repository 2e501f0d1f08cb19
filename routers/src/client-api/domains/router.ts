import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure, router } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import { ListMetadataRef, pageArgs, pageOfArgs } from '../graphql/list.ts';
import {
  addDomain,
  type ClientDomain,
  DOMAIN_STATES,
  getDomain,
  listDomains,
  NAME_SERVERS,
  removeDomain,
  reverifyDomain,
} from './service.ts';

const tags = ['Widgets'];

/** §2.2 OrganizationDomain: the client shape without `organizationId` (the widgets' REST shape). */
const WidgetDomain = z.object({
  id: z.string(),
  domain: z.string(),
  state: z.enum(DOMAIN_STATES),
  nameServer: z.enum(NAME_SERVERS),
  verificationPrefix: z.string().nullable(),
  verificationToken: z.string().nullable(),
  subdomain: z.string().nullable(),
  createdAt: z.string(),
});
const widgetDomain = ({ organizationId: _organizationId, ...rest }: ClientDomain) => rest;
const DomainIdPath = z.object({ domainId: Id });

/** REST for the domain verification widget (WIDGETS-API.md §2, rows 15–17). */
export const domainsWidgetProcedures = {
  organizationDomains: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/admin-portal/organization-domains',
        tags,
        summary: "The organization's domains (AdminPortalDomainVerification)",
      },
    })
    .input(z.object({}))
    .output(z.object({ data: z.array(WidgetDomain) }))
    .query(async ({ ctx }) => ({ data: (await listDomains(ctx.scope)).data.map(widgetDomain) })),

  deleteOrganizationDomain: clientProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/_widgets/admin-portal/organization-domains/{domainId}',
        tags,
        summary: 'Remove a domain of the organization; answers the domain as it was',
      },
    })
    .input(DomainIdPath)
    .output(WidgetDomain)
    .mutation(async ({ ctx, input }) => widgetDomain(await removeDomain(ctx.scope, input.domainId))),

  reverifyOrganizationDomain: clientProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/_widgets/admin-portal/organization-domains/{domainId}/reverify',
        tags,
        summary: 'Restart verification of a failed domain (409 domain_not_failed otherwise)',
      },
    })
    .input(DomainIdPath)
    .output(WidgetDomain)
    .mutation(async ({ ctx, input }) => widgetDomain(await reverifyDomain(ctx.scope, input.domainId))),
};

const ClientDomainOut = WidgetDomain.extend({ organizationId: z.string() });
const DomainId = z.object({ id: Id });
const PageInput = z
  .object({
    after: z.string().nullish(),
    before: z.string().nullish(),
    limit: z.number().int().nullish(),
    order: z.enum(['Asc', 'Desc', 'Normal']).nullish(),
  })
  .default({});

/** Typed tRPC for frontends (`client.domains.*`), the operations and shapes of GraphQL. */
export const domainsClientProcedures = {
  domains: router({
    list: clientProcedure
      .input(PageInput)
      .output(
        z.object({
          data: z.array(ClientDomainOut),
          listMetadata: z.object({ before: z.string().nullable(), after: z.string().nullable() }),
        }),
      )
      .query(({ ctx, input }) => listDomains(ctx.scope, pageOfArgs(input))),
    get: clientProcedure
      .input(DomainId)
      .output(ClientDomainOut)
      .query(({ ctx, input }) => getDomain(ctx.scope, input.id)),
    create: clientProcedure
      .input(z.object({ domain: z.string().min(1).max(253) }))
      .output(ClientDomainOut)
      .mutation(({ ctx, input }) => addDomain(ctx.scope, input.domain)),
    delete: clientProcedure
      .input(DomainId)
      .output(ClientDomainOut)
      .mutation(({ ctx, input }) => removeDomain(ctx.scope, input.id)),
    reverify: clientProcedure
      .input(DomainId)
      .output(ClientDomainOut)
      .mutation(({ ctx, input }) => reverifyDomain(ctx.scope, input.id)),
  }),
};

// GraphQL (WIDGETS-API.md §4): the same service functions.
const DomainState = builder.enumType('OrganizationDomainState', { values: DOMAIN_STATES });
const NameServer = builder.enumType('DomainVerificationNameServer', { values: NAME_SERVERS });

const OrganizationDomainRef = builder.objectRef<ClientDomain>('OrganizationDomain').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    organizationId: t.exposeString('organizationId'),
    domain: t.exposeString('domain'),
    state: t.field({ type: DomainState, resolve: (d) => d.state }),
    nameServer: t.field({ type: NameServer, resolve: (d) => d.nameServer }),
    subdomain: t.exposeString('subdomain', { nullable: true }),
    verificationPrefix: t.exposeString('verificationPrefix', { nullable: true }),
    verificationToken: t.exposeString('verificationToken', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
  }),
});

const OrganizationDomainList = builder
  .objectRef<Awaited<ReturnType<typeof listDomains>>>('OrganizationDomainList')
  .implement({
    fields: (t) => ({
      data: t.field({ type: [OrganizationDomainRef], resolve: (list) => list.data }),
      listMetadata: t.field({ type: ListMetadataRef, resolve: (list) => list.listMetadata }),
    }),
  });

builder.queryFields((t) => ({
  organizationDomains: t.field({
    type: OrganizationDomainList,
    args: pageArgs(t),
    resolve: (_root, args, ctx) => listDomains(ctx.scope, pageOfArgs(args)),
  }),
  organizationDomain: t.field({
    type: OrganizationDomainRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getDomain(ctx.scope, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createOrganizationDomain: t.field({
    type: OrganizationDomainRef,
    args: { domain: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => addDomain(ctx.scope, args.domain),
  }),
  deleteOrganizationDomain: t.field({
    type: OrganizationDomainRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => removeDomain(ctx.scope, String(args.id)),
  }),
  reverifyOrganizationDomain: t.field({
    type: OrganizationDomainRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => reverifyDomain(ctx.scope, String(args.id)),
  }),
}));
