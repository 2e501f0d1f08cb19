import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  Directory,
  DirectoryGroup,
  DirectoryGroupList,
  DirectoryIdInput,
  DirectoryList,
  DirectoryUser,
  DirectoryUserList,
  ListDirectoriesInput,
  ListDirectoryGroupsInput,
  ListDirectoryUsersInput,
} from './schemas.ts';
import {
  deleteDirectory,
  getDirectory,
  getDirectoryGroup,
  getDirectoryUser,
  listDirectories,
  listDirectoryGroups,
  listDirectoryUsers,
} from './service.ts';

const tags = ['Directory Sync'];

/** Upstream's directory-sync API at its paths: the SDK's `directorySync` module. */
export const directoriesRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/directories', tags, summary: 'List directories' } })
    .input(ListDirectoriesInput)
    .output(DirectoryList)
    .query(({ ctx, input }) => listDirectories(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/directories/{id}', tags, summary: 'Get a directory' } })
    .input(DirectoryIdInput)
    .output(Directory)
    .query(({ ctx, input }) => getDirectory(ctx.scope, input.id)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/directories/{id}', tags, summary: 'Delete a directory' },
      successStatus: 204,
    })
    .input(DirectoryIdInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteDirectory(ctx.scope, input.id);
    }),

  users: router({
    list: apiProcedure
      .meta({ openapi: { method: 'GET', path: '/directory_users', tags, summary: 'List directory users' } })
      .input(ListDirectoryUsersInput)
      .output(DirectoryUserList)
      .query(({ ctx, input }) => listDirectoryUsers(ctx.scope, input)),

    get: apiProcedure
      .meta({ openapi: { method: 'GET', path: '/directory_users/{id}', tags, summary: 'Get a directory user' } })
      .input(DirectoryIdInput)
      .output(DirectoryUser)
      .query(({ ctx, input }) => getDirectoryUser(ctx.scope, input.id)),
  }),

  groups: router({
    list: apiProcedure
      .meta({ openapi: { method: 'GET', path: '/directory_groups', tags, summary: 'List directory groups' } })
      .input(ListDirectoryGroupsInput)
      .output(DirectoryGroupList)
      .query(({ ctx, input }) => listDirectoryGroups(ctx.scope, input)),

    get: apiProcedure
      .meta({ openapi: { method: 'GET', path: '/directory_groups/{id}', tags, summary: 'Get a directory group' } })
      .input(DirectoryIdInput)
      .output(DirectoryGroup)
      .query(({ ctx, input }) => getDirectoryGroup(ctx.scope, input.id)),
  }),
});
