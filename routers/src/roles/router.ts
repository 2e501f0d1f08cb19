import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  AddEnvironmentRolePermissionInput,
  AddOrganizationRolePermissionInput,
  CreateEnvironmentRoleInput,
  CreateOrganizationRoleInput,
  OrganizationRoleInput,
  OrganizationRolesInput,
  RemoveOrganizationRolePermissionInput,
  Role,
  RoleList,
  RoleSlugInput,
  SetDefaultRoleInput,
  SetEnvironmentRolePermissionsInput,
  SetOrganizationRolePermissionsInput,
  UpdateEnvironmentRoleInput,
  UpdateOrganizationRoleInput,
} from './schemas.ts';
import {
  addEnvironmentRolePermission,
  addOrganizationRolePermission,
  createEnvironmentRole,
  createOrganizationRole,
  deleteEnvironmentRole,
  deleteOrganizationRole,
  getDefaultRole,
  getEnvironmentRole,
  getOrganizationRole,
  listEnvironmentRoles,
  listOrganizationRoles,
  removeOrganizationRolePermission,
  setDefaultRole,
  setEnvironmentRolePermissions,
  setOrganizationRolePermissions,
  updateEnvironmentRole,
  updateOrganizationRole,
} from './service.ts';

const tags = ['Roles'];
const base = '/authorization/roles';
const org = '/authorization/organizations/{organization_id}/roles';

const organizationRolesRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: org,
        tags,
        summary: "List an organization's roles (its own and the environment's)",
      },
    })
    .input(OrganizationRolesInput)
    .output(RoleList)
    .query(({ ctx, input }) => listOrganizationRoles(ctx.scope, input.organization_id)),

  create: apiProcedure
    .meta({ openapi: { method: 'POST', path: org, tags, summary: 'Create an organization role' }, successStatus: 201 })
    .input(CreateOrganizationRoleInput)
    .output(Role)
    .mutation(({ ctx, input }) => createOrganizationRole(ctx.scope, input)),

  get: apiProcedure
    .meta({
      openapi: { method: 'GET', path: `${org}/{slug}`, tags, summary: 'Get a role that applies to an organization' },
    })
    .input(OrganizationRoleInput)
    .output(Role)
    .query(({ ctx, input }) => getOrganizationRole(ctx.scope, input)),

  update: apiProcedure
    .meta({ openapi: { method: 'PATCH', path: `${org}/{slug}`, tags, summary: 'Update an organization role' } })
    .input(UpdateOrganizationRoleInput)
    .output(Role)
    .mutation(({ ctx, input }) => updateOrganizationRole(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${org}/{slug}`,
        tags,
        summary: 'Delete an organization role (409 while in use)',
      },
      successStatus: 204,
    })
    .input(OrganizationRoleInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteOrganizationRole(ctx.scope, input)),

  setPermissions: apiProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: `${org}/{role_slug}/permissions`,
        tags,
        summary: "Replace an organization role's permissions",
      },
    })
    .input(SetOrganizationRolePermissionsInput)
    .output(Role)
    .mutation(({ ctx, input }) => setOrganizationRolePermissions(ctx.scope, input)),

  addPermission: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${org}/{role_slug}/permissions`,
        tags,
        summary: 'Add a permission to an organization role',
      },
    })
    .input(AddOrganizationRolePermissionInput)
    .output(Role)
    .mutation(({ ctx, input }) => addOrganizationRolePermission(ctx.scope, input)),

  removePermission: apiProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${org}/{role_slug}/permissions/{permission_slug}`,
        tags,
        summary: 'Remove a permission from an organization role',
      },
      successStatus: 204,
    })
    .input(RemoveOrganizationRolePermissionInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeOrganizationRolePermission(ctx.scope, input)),
});

export const rolesRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'List environment roles' } })
    .input(z.object({}))
    .output(RoleList)
    .query(({ ctx }) => listEnvironmentRoles(ctx.scope)),

  create: apiProcedure
    .meta({ openapi: { method: 'POST', path: base, tags, summary: 'Create an environment role' }, successStatus: 201 })
    .input(CreateEnvironmentRoleInput)
    .output(Role)
    .mutation(({ ctx, input }) => createEnvironmentRole(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{slug}`, tags, summary: 'Get an environment role' } })
    .input(RoleSlugInput)
    .output(Role)
    .query(({ ctx, input }) => getEnvironmentRole(ctx.scope, input.slug)),

  update: apiProcedure
    .meta({ openapi: { method: 'PATCH', path: `${base}/{slug}`, tags, summary: 'Update an environment role' } })
    .input(UpdateEnvironmentRoleInput)
    .output(Role)
    .mutation(({ ctx, input }) => updateEnvironmentRole(ctx.scope, input)),

  /** Not in the SDK: an unused environment role other than the default can be deleted. */
  delete: apiProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{slug}`,
        tags,
        summary: 'Delete an environment role (409 while in use or default)',
      },
      successStatus: 204,
    })
    .input(RoleSlugInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteEnvironmentRole(ctx.scope, input.slug)),

  setPermissions: apiProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: `${base}/{role_slug}/permissions`,
        tags,
        summary: "Replace an environment role's permissions",
      },
    })
    .input(SetEnvironmentRolePermissionsInput)
    .output(Role)
    .mutation(({ ctx, input }) => setEnvironmentRolePermissions(ctx.scope, input)),

  addPermission: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{role_slug}/permissions`,
        tags,
        summary: 'Add a permission to an environment role',
      },
    })
    .input(AddEnvironmentRolePermissionInput)
    .output(Role)
    .mutation(({ ctx, input }) => addEnvironmentRolePermission(ctx.scope, input)),

  /** Not in the SDK: the role memberships get when created without one. */
  getDefault: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/authorization/default_role', tags, summary: 'Get the default role' } })
    .input(z.object({}))
    .output(Role)
    .query(({ ctx }) => getDefaultRole(ctx.scope)),

  /** Not in the SDK: makes an environment role the default (the previous default stays, as an ordinary role). */
  setDefault: apiProcedure
    .meta({ openapi: { method: 'PUT', path: '/authorization/default_role', tags, summary: 'Set the default role' } })
    .input(SetDefaultRoleInput)
    .output(Role)
    .mutation(({ ctx, input }) => setDefaultRole(ctx.scope, input.slug)),

  organization: organizationRolesRouter,
});
