import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreateUserInput,
  ListUsersInput,
  UpdateUserInput,
  User,
  UserExternalIdInput,
  UserIdInput,
  UserList,
} from './schemas.ts';
import { createUser, deleteUser, getUser, getUserByExternalId, listUsers, updateUser } from './service.ts';

const tags = ['Users'];

export const usersRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/user_management/users', tags, summary: 'List users' } })
    .input(ListUsersInput)
    .output(UserList)
    .query(({ ctx, input }) => listUsers(ctx.scope, input)),

  // Before `get` and the sessions' `/users/{id}/sessions`: the literal segment wins.
  getByExternalId: apiProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/user_management/users/external_id/{external_id}',
        tags,
        summary: 'Get a user by external id',
      },
    })
    .input(UserExternalIdInput)
    .output(User)
    .query(({ ctx, input }) => getUserByExternalId(ctx.scope, input.external_id)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/user_management/users/{id}', tags, summary: 'Get a user' } })
    .input(UserIdInput)
    .output(User)
    .query(({ ctx, input }) => getUser(ctx.scope, input.id)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/user_management/users', tags, summary: 'Create a user' },
      successStatus: 201,
    })
    .input(CreateUserInput)
    .output(User)
    .mutation(({ ctx, input }) => createUser(ctx.scope, input)),

  update: apiProcedure
    .meta({ openapi: { method: 'PUT', path: '/user_management/users/{id}', tags, summary: 'Update a user' } })
    .input(UpdateUserInput)
    .output(User)
    .mutation(({ ctx, input }) => updateUser(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/user_management/users/{id}', tags, summary: 'Delete a user' },
      successStatus: 204,
    })
    .input(UserIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteUser(ctx.scope, input.id)),
});
