import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { WidgetDomain } from '../domains/schemas.ts';
import { type ClientDomain, listDomains, removeDomain, reverifyDomain } from '../domains/service.ts';

const tags = ['Widgets'];

/** §2.2 OrganizationDomain: the client shape without `organizationId`. */
const widgetDomain = ({ organizationId: _organizationId, ...rest }: ClientDomain) => rest;
const DomainIdPath = z.object({ domainId: Id });

/** The domain verification widget (WIDGETS-API.md §2, rows 15–17). */
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
