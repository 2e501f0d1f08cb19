import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { GraphQLPageArgs, graphqlList, ListMetadata, pageOfGraphQLArgs, pageParams } from '../../kernel/paging.ts';
import { clientProcedure, router } from '../../trpc.ts';
import { ClientDomain } from '../domains/schemas.ts';
import { addDomain, getDomain, listDomains, removeDomain, reverifyDomain } from '../domains/service.ts';

const DomainId = z.object({ id: Id });

/** `client.domains.*`, the operations and shapes of GraphQL. */
export const domainsClientProcedures = {
  domains: router({
    list: clientProcedure
      .input(GraphQLPageArgs.default({}))
      .output(z.object({ data: z.array(ClientDomain), listMetadata: ListMetadata }))
      .query(async ({ ctx, input }) => graphqlList(await listDomains(ctx.scope, pageParams(pageOfGraphQLArgs(input))))),
    get: clientProcedure
      .input(DomainId)
      .output(ClientDomain)
      .query(({ ctx, input }) => getDomain(ctx.scope, input.id)),
    create: clientProcedure
      .input(z.object({ domain: z.string().min(1).max(253) }))
      .output(ClientDomain)
      .mutation(({ ctx, input }) => addDomain(ctx.scope, input.domain)),
    delete: clientProcedure
      .input(DomainId)
      .output(ClientDomain)
      .mutation(({ ctx, input }) => removeDomain(ctx.scope, input.id)),
    reverify: clientProcedure
      .input(DomainId)
      .output(ClientDomain)
      .mutation(({ ctx, input }) => reverifyDomain(ctx.scope, input.id)),
  }),
};
