import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { ListMetadata, WidgetPageInput, widgetList, widgetPageParams } from '../../kernel/paging.ts';
import { clientProcedure } from '../../trpc.ts';
import {
  createWidgetApiKey,
  createWidgetUserApiKey,
  deleteWidgetApiKey,
  deleteWidgetUserApiKey,
  expireWidgetApiKey,
  expireWidgetUserApiKey,
  listWidgetApiKeyPermissions,
  listWidgetApiKeys,
  listWidgetUserApiKeyPermissions,
  listWidgetUserApiKeys,
} from '../api-keys/service.ts';

const tags = ['Widgets'];

/** A permission slug as the organization API keys take it (organization-api-keys/schemas.ts). */
const PermissionSlug = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_\-:.]*$/, 'a permission slug is letters, digits and _ - : .');

const Search = z.string().max(256).optional();

const WidgetApiKey = z.object({
  id: z.string(),
  name: z.string(),
  obfuscatedValue: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
  permissions: z.array(z.string()),
});
const WidgetUserApiKey = WidgetApiKey.extend({
  owner: z.object({
    type: z.literal('user'),
    id: z.string(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    displayName: z.string(),
  }),
});
const CreatedWidgetApiKey = WidgetApiKey.omit({ lastUsedAt: true }).extend({ value: z.string() });
const WidgetKeyPermission = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
});
const CreateKeyInput = z.object({
  name: z.string().trim().min(1).max(256),
  permissions: z.array(PermissionSlug).max(100),
  expiresAt: z.string().max(64).nullish(),
});
const ExpireKeyInput = z.object({ apiKeyId: Id, expiresAt: z.string().max(64).nullish() });
const Deleted = z.object({ success: z.boolean() });

const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), list_metadata: ListMetadata });

const widget = (
  widgetName: 'ApiKeys' | 'UserApiKeys',
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  summary: string,
) => ({
  openapi: { method, path: `/_widgets/${widgetName}/${path}` as const, tags, summary },
});

/**
 * The ApiKeys widget (scope `widgets:api-keys:manage`, the organization's own keys) and the
 * UserApiKeys widget (`widgets:user-api-keys:manage-self` for the caller's keys, `manage-all` for
 * every member's), `@workos-inc/widgets` 1.18; refusals are the services' ApiErrors.
 */
export const apiKeysWidgetProcedures = {
  apiKeys: clientProcedure
    .meta(widget('ApiKeys', 'GET', 'organization-api-keys', "The organization's API keys (ApiKeys)"))
    .input(WidgetPageInput.extend({ search: Search }))
    .output(listOf(WidgetApiKey))
    .query(async ({ ctx, input }) =>
      widgetList(await listWidgetApiKeys(ctx.scope, widgetPageParams(input), input.search)),
    ),

  createApiKey: clientProcedure
    .meta({
      ...widget('ApiKeys', 'POST', 'organization-api-keys', 'Create an API key of the organization (ApiKeys)'),
      successStatus: 201,
      secretResponse: true,
    })
    .input(CreateKeyInput)
    .output(CreatedWidgetApiKey)
    .mutation(({ ctx, input }) => createWidgetApiKey(ctx.scope, input)),

  apiKeyPermissions: clientProcedure
    .meta(widget('ApiKeys', 'GET', 'permissions', 'The permissions an API key may be given (ApiKeys)'))
    .input(WidgetPageInput.extend({ search: Search }))
    .output(listOf(WidgetKeyPermission))
    .query(async ({ ctx, input }) =>
      widgetList(await listWidgetApiKeyPermissions(ctx.scope, widgetPageParams(input), input.search)),
    ),

  expireApiKey: clientProcedure
    .meta(widget('ApiKeys', 'POST', '{apiKeyId}/expire', 'Expire an API key of the organization (ApiKeys)'))
    .input(ExpireKeyInput)
    .output(WidgetApiKey)
    .mutation(({ ctx, input }) => expireWidgetApiKey(ctx.scope, input.apiKeyId, input.expiresAt)),

  deleteApiKey: clientProcedure
    .meta(widget('ApiKeys', 'DELETE', '{apiKeyId}', 'Revoke an API key of the organization (ApiKeys)'))
    .input(z.object({ apiKeyId: Id }))
    .output(Deleted)
    .mutation(({ ctx, input }) => deleteWidgetApiKey(ctx.scope, input.apiKeyId)),

  userApiKeys: clientProcedure
    .meta(widget('UserApiKeys', 'GET', 'api-keys', "The caller's API keys, or every member's (UserApiKeys)"))
    .input(WidgetPageInput.extend({ search: Search }))
    .output(listOf(WidgetUserApiKey))
    .query(async ({ ctx, input }) =>
      widgetList(await listWidgetUserApiKeys(ctx.scope, widgetPageParams(input), input.search)),
    ),

  createUserApiKey: clientProcedure
    .meta({
      ...widget('UserApiKeys', 'POST', 'api-keys', 'Create an API key of the caller (UserApiKeys)'),
      successStatus: 201,
      secretResponse: true,
    })
    .input(CreateKeyInput)
    .output(CreatedWidgetApiKey)
    .mutation(({ ctx, input }) => createWidgetUserApiKey(ctx.scope, input)),

  userApiKeyPermissions: clientProcedure
    .meta(
      widget('UserApiKeys', 'GET', 'permissions', "The caller's permissions, the most a key may carry (UserApiKeys)"),
    )
    .input(WidgetPageInput.extend({ search: Search }))
    .output(listOf(WidgetKeyPermission))
    .query(({ ctx, input }) => listWidgetUserApiKeyPermissions(ctx.scope, input.search)),

  expireUserApiKey: clientProcedure
    .meta(widget('UserApiKeys', 'POST', '{apiKeyId}/expire', 'Expire a user API key (UserApiKeys)'))
    .input(ExpireKeyInput)
    .output(WidgetUserApiKey)
    .mutation(({ ctx, input }) => expireWidgetUserApiKey(ctx.scope, input.apiKeyId, input.expiresAt)),

  deleteUserApiKey: clientProcedure
    .meta(widget('UserApiKeys', 'DELETE', '{apiKeyId}', 'Revoke a user API key (UserApiKeys)'))
    .input(z.object({ apiKeyId: Id }))
    .output(Deleted)
    .mutation(({ ctx, input }) => deleteWidgetUserApiKey(ctx.scope, input.apiKeyId)),
};
