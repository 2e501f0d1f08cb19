import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreatePermissionInput,
  ListPermissionsInput,
  Permission,
  PermissionList,
  PermissionSlugInput,
  UpdatePermissionInput,
} from './schemas.ts';
import { createPermission, deletePermission, getPermission, listPermissions, updatePermission } from './service.ts';

const tags = ['Permissions'];
const base = '/authorization/permissions';

export const permissionsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'List permissions' } })
    .input(ListPermissionsInput)
    .output(PermissionList)
    .query(({ ctx, input }) => listPermissions(ctx.scope, input)),

  create: apiProcedure
    .meta({ openapi: { method: 'POST', path: base, tags, summary: 'Create a permission' }, successStatus: 201 })
    .input(CreatePermissionInput)
    .output(Permission)
    .mutation(({ ctx, input }) => createPermission(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{slug}`, tags, summary: 'Get a permission' } })
    .input(PermissionSlugInput)
    .output(Permission)
    .query(({ ctx, input }) => getPermission(ctx.scope, input.slug)),

  update: apiProcedure
    .meta({ openapi: { method: 'PATCH', path: `${base}/{slug}`, tags, summary: 'Update a permission' } })
    .input(UpdatePermissionInput)
    .output(Permission)
    .mutation(({ ctx, input }) => updatePermission(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: `${base}/{slug}`, tags, summary: 'Delete a permission' },
      successStatus: 204,
    })
    .input(PermissionSlugInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deletePermission(ctx.scope, input.slug)),
});
