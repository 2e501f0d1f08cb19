import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import { toOrganizationDomain } from './claims.ts';
import { CreateOrganizationDomainInput, DomainIdInput, OrganizationDomain } from './schemas.ts';
import {
  createOrganizationDomain,
  deleteOrganizationDomain,
  getOrganizationDomain,
  verifyOrganizationDomain,
} from './service.ts';

const tags = ['Organization domains'];

export const organizationDomainsRouter = router({
  get: apiProcedure
    .meta({
      openapi: { method: 'GET', path: '/organization_domains/{id}', tags, summary: 'Get an organization domain' },
    })
    .input(DomainIdInput)
    .output(OrganizationDomain)
    .query(({ ctx, input }) => getOrganizationDomain(ctx.scope, input.id, toOrganizationDomain)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/organization_domains', tags, summary: 'Create an organization domain' },
      successStatus: 201,
    })
    .input(CreateOrganizationDomainInput)
    .output(OrganizationDomain)
    .mutation(({ ctx, input }) => createOrganizationDomain(ctx.scope, input, toOrganizationDomain)),

  verify: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/organization_domains/{id}/verify',
        tags,
        summary: 'Start verification of a domain',
      },
      successStatus: 201,
    })
    .input(DomainIdInput)
    .output(OrganizationDomain)
    .mutation(({ ctx, input }) => verifyOrganizationDomain(ctx.scope, input.id, toOrganizationDomain)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/organization_domains/{id}', tags, summary: 'Delete an organization domain' },
      successStatus: 204,
    })
    .input(DomainIdInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteOrganizationDomain(ctx.scope, input.id, toOrganizationDomain);
    }),
});
