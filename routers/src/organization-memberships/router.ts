import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreateOrganizationMembershipInput,
  ListOrganizationMembershipsInput,
  OrganizationMembership,
  OrganizationMembershipIdInput,
  OrganizationMembershipList,
  UpdateOrganizationMembershipInput,
} from './schemas.ts';
import {
  createOrganizationMembership,
  deleteOrganizationMembership,
  getOrganizationMembership,
  listOrganizationMemberships,
  setMembershipStatus,
  updateOrganizationMembership,
} from './service.ts';

const tags = ['Organization memberships'];
const base = '/user_management/organization_memberships';

export const organizationMembershipsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'List organization memberships' } })
    .input(ListOrganizationMembershipsInput)
    .output(OrganizationMembershipList)
    .query(({ ctx, input }) => listOrganizationMemberships(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{id}`, tags, summary: 'Get an organization membership' } })
    .input(OrganizationMembershipIdInput)
    .output(OrganizationMembership)
    .query(({ ctx, input }) => getOrganizationMembership(ctx.scope, input.id)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: base, tags, summary: 'Create an organization membership' },
      successStatus: 201,
    })
    .input(CreateOrganizationMembershipInput)
    .output(OrganizationMembership)
    .mutation(({ ctx, input }) => createOrganizationMembership(ctx.scope, input)),

  update: apiProcedure
    .meta({
      openapi: { method: 'PUT', path: `${base}/{id}`, tags, summary: "Change an organization membership's roles" },
    })
    .input(UpdateOrganizationMembershipInput)
    .output(OrganizationMembership)
    .mutation(({ ctx, input }) => updateOrganizationMembership(ctx.scope, input)),

  deactivate: apiProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: `${base}/{id}/deactivate`,
        tags,
        summary: 'Deactivate an organization membership',
      },
    })
    .input(OrganizationMembershipIdInput)
    .output(OrganizationMembership)
    .mutation(({ ctx, input }) => setMembershipStatus(ctx.scope, input.id, 'inactive')),

  reactivate: apiProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: `${base}/{id}/reactivate`,
        tags,
        summary: 'Reactivate an organization membership',
      },
    })
    .input(OrganizationMembershipIdInput)
    .output(OrganizationMembership)
    .mutation(({ ctx, input }) => setMembershipStatus(ctx.scope, input.id, 'active')),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: `${base}/{id}`, tags, summary: 'Delete an organization membership' },
      successStatus: 204,
    })
    .input(OrganizationMembershipIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteOrganizationMembership(ctx.scope, input.id)),
});
