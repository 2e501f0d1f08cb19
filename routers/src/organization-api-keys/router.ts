import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  ApiKeyIdInput,
  ApiKeyValidation,
  CreatedOrganizationApiKey,
  CreateOrganizationApiKeyInput,
  ListOrganizationApiKeysInput,
  OrganizationApiKeyList,
  ValidateApiKeyInput,
} from './schemas.ts';
import {
  createOrganizationApiKey,
  deleteOrganizationApiKey,
  listOrganizationApiKeys,
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
