import { z } from 'zod';
import { apiProcedure, router } from '../trpc.ts';
import {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsInput,
  UpdateWebhookEndpointInput,
  WebhookEndpoint,
  WebhookEndpointIdInput,
  WebhookEndpointList,
} from './schemas.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
} from './service.ts';

const tags = ['Webhook endpoints'];

export const webhookEndpointsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/webhook_endpoints', tags, summary: 'List webhook endpoints' } })
    .input(ListWebhookEndpointsInput)
    .output(WebhookEndpointList)
    .query(({ ctx, input }) => listWebhookEndpoints(ctx.scope, input)),

  get: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/webhook_endpoints/{id}', tags, summary: 'Get a webhook endpoint' } })
    .input(WebhookEndpointIdInput)
    .output(WebhookEndpoint)
    .query(({ ctx, input }) => getWebhookEndpoint(ctx.scope, input.id)),

  create: apiProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhook_endpoints', tags, summary: 'Create a webhook endpoint' },
      successStatus: 201,
    })
    .input(CreateWebhookEndpointInput)
    .output(WebhookEndpoint)
    .mutation(({ ctx, input }) => createWebhookEndpoint(ctx.scope, input)),

  update: apiProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/webhook_endpoints/{id}', tags, summary: 'Update a webhook endpoint' },
    })
    .input(UpdateWebhookEndpointInput)
    .output(WebhookEndpoint)
    .mutation(({ ctx, input }) => updateWebhookEndpoint(ctx.scope, input)),

  delete: apiProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/webhook_endpoints/{id}', tags, summary: 'Delete a webhook endpoint' },
      successStatus: 204,
    })
    .input(WebhookEndpointIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteWebhookEndpoint(ctx.scope, input.id)),
});
