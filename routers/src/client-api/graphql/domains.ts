import { type ClientDomain, DOMAIN_STATES, NAME_SERVERS } from '../domains/service.ts';
import type { ClientBuilder } from './builder.ts';
import { type ClientProcedures, procedures } from './caller.ts';
import type { PagingTypes } from './paging.ts';

/** The organization's domains (WIDGETS-API.md §4). */
export function domainTypes(builder: ClientBuilder, { ListMetadataRef, pageArgs }: PagingTypes) {
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
    .objectRef<Awaited<ReturnType<ClientProcedures['domains']['list']>>>('OrganizationDomainList')
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
      resolve: (_root, args, ctx) => procedures.domains.list(ctx, args),
    }),
    organizationDomain: t.field({
      type: OrganizationDomainRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.domains.get(ctx, { id: String(args.id) }),
    }),
  }));

  builder.mutationFields((t) => ({
    createOrganizationDomain: t.field({
      type: OrganizationDomainRef,
      args: { domain: t.arg.string({ required: true }) },
      resolve: (_root, args, ctx) => procedures.domains.create(ctx, { domain: args.domain }),
    }),
    deleteOrganizationDomain: t.field({
      type: OrganizationDomainRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.domains.delete(ctx, { id: String(args.id) }),
    }),
    reverifyOrganizationDomain: t.field({
      type: OrganizationDomainRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.domains.reverify(ctx, { id: String(args.id) }),
    }),
  }));
}
