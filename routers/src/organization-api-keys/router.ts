import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  ApiKeyIdInput,
  ApiKeyValidation,
  CreatedOrganizationApiKey,
  CreatedUserApiKey,
  CreateOrganizationApiKeyInput,
  CreateUserApiKeyInput,
  ListOrganizationApiKeysInput,
  ListUserApiKeysInput,
  OrganizationApiKeyList,
  UserApiKeyList,
  ValidateApiKeyInput,
} from './schemas.ts';
import {
  createOrganizationApiKey,
  createUserApiKey,
  deleteOrganizationApiKey,
  listOrganizationApiKeys,
  listUserApiKeys,
  validateOrganizationApiKey,
} from './service.ts';

const tags = ['Organization API keys'];
const base = '/organizations/{organization_id}/api_keys';

export const organizationApiKeysRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: "List an organization's API keys" } })
    .input(ListOrganizationApiKeysInput)
    .output(OrganizationApiKeyList)
    .query(({ ctx, input }) => listOrganizationApiKeys(ctx.scope, input)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: base, tags, summary: 'Create an API key of an organization (value shown once)' },
      successStatus: 201,
      secretResponse: true,
    })
    .input(CreateOrganizationApiKeyInput)
    .output(CreatedOrganizationApiKey)
    .mutation(({ ctx, input }) => createOrganizationApiKey(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api_keys/{id}', tags, summary: 'Delete an API key' },
      successStatus: 204,
    })
    .input(ApiKeyIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteOrganizationApiKey(ctx.scope, input.id)),

  validate: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/api_keys/validations', tags, summary: 'Validate an API key value' },
    })
    .input(ValidateApiKeyInput)
    .output(ApiKeyValidation)
    .mutation(({ ctx, input }) => validateOrganizationApiKey(ctx.scope, input)),
});

const userTags = ['User API keys'];
const userBase = '/user_management/users/{user_id}/api_keys';

/** Upstream's user API keys: the same keys, held by a member of one organization. */
export const userApiKeysRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: userBase, tags: userTags, summary: "List a user's API keys" } })
    .input(ListUserApiKeysInput)
    .output(UserApiKeyList)
    .query(({ ctx, input }) => listUserApiKeys(ctx.scope, input)),

  create: apiProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: userBase,
        tags: userTags,
        summary: 'Create an API key of a user in one of their organizations (value shown once)',
      },
      successStatus: 201,
      secretResponse: true,
    })
    .input(CreateUserApiKeyInput)
    .output(CreatedUserApiKey)
    .mutation(({ ctx, input }) => createUserApiKey(ctx.scope, input)),
});
