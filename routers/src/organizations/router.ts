import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreateOrganizationInput,
  ExternalIdInput,
  ListOrganizationsInput,
  Organization,
  OrganizationIdInput,
  OrganizationList,
  UpdateOrganizationInput,
} from './schemas.ts';
import {
  createOrganization,
  deleteOrganization,
  getOrganization,
  getOrganizationByExternalId,
  listOrganizations,
  updateOrganization,
} from './service.ts';

const tags = ['Organizations'];

export const organizationsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/organizations', tags, summary: 'List organizations' } })
    .input(ListOrganizationsInput)
    .output(OrganizationList)
    .query(({ ctx, input }) => listOrganizations(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/organizations/{id}', tags, summary: 'Get an organization' } })
    .input(OrganizationIdInput)
    .output(Organization)
    .query(({ ctx, input }) => getOrganization(ctx.scope, input.id)),

  getByExternalId: apiProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/organizations/external_id/{external_id}',
        tags,
        summary: 'Get an organization by external id',
      },
    })
    .input(ExternalIdInput)
    .output(Organization)
    .query(({ ctx, input }) => getOrganizationByExternalId(ctx.scope, input.external_id)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/organizations', tags, summary: 'Create an organization' },
      successStatus: 201,
    })
    .input(CreateOrganizationInput)
    .output(Organization)
    .mutation(({ ctx, input }) => createOrganization(ctx.scope, input)),

  update: apiProcedure
    .meta({ openapi: { method: 'PUT', path: '/organizations/{id}', tags, summary: 'Update an organization' } })
    .input(UpdateOrganizationInput)
    .output(Organization)
    .mutation(({ ctx, input }) => updateOrganization(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/organizations/{id}', tags, summary: 'Delete an organization' },
      successStatus: 204,
    })
    .input(OrganizationIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteOrganization(ctx.scope, input.id)),
});
