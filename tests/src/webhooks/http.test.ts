import { webhookEndpoints } from '@atrium/db';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const sdkFor = (env: TestEnvironment) =>
  new WorkOS(env.apiKey, {
    apiHostname: '127.0.0.1',
    port: Number(new URL(env.world.url).port),
    https: false,
    clientId: env.clientId,
  });

async function storedEndpoints(env: TestEnvironment) {
  return env.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.environmentId, env.environmentId));
}

describe('/webhook_endpoints', () => {
  it('creates (201, with its secret), lists, updates and deletes (204) an endpoint', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/webhook_endpoints', {
      endpoint_url: 'https://hooks.example.com/workos',
      events: ['organization.created', 'organization_domain.verified'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'webhook_endpoint',
      endpoint_url: 'https://hooks.example.com/workos',
      status: 'enabled',
      events: ['organization.created', 'organization_domain.verified'],
    });
    expect(created.body.id).toMatch(/^we_[0-9A-Z]{26}$/);
    expect(created.body.secret).toMatch(/^[0-9A-Za-z]{40}$/);

    const list = await env.http.get('/webhook_endpoints');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [created.body], list_metadata: { before: null, after: null } });

    const patched = await env.http.patch(`/webhook_endpoints/${created.body.id}`, {
      status: 'disabled',
      events: ['*'],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'disabled', events: ['*'], secret: created.body.secret });

    const deleted = await env.http.delete(`/webhook_endpoints/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await storedEndpoints(env)).toEqual([]);
    expect((await env.http.delete(`/webhook_endpoints/${created.body.id}`)).status).toBe(404);
  });

  it.each([
    ['a missing url', { events: ['*'] }, 'endpoint_url'],
    ['a non-http scheme', { endpoint_url: 'ftp://hooks.example.com/x', events: ['*'] }, 'endpoint_url'],
    ['a relative url', { endpoint_url: '/hooks', events: ['*'] }, 'endpoint_url'],
    ['no events', { endpoint_url: 'https://hooks.example.com/x', events: [] }, 'events'],
    ['a bad event name', { endpoint_url: 'https://hooks.example.com/x', events: ['Not An Event'] }, 'events.0'],
  ])('refuses %s with 422 and stores nothing', async (_label, body, field) => {
    const env = await newEnvironment();
    const res = await env.http.post('/webhook_endpoints', body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await storedEndpoints(env)).toEqual([]);
  });

  it("hides another environment's endpoints (404)", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const theirs = await other.http.post('/webhook_endpoints', {
      endpoint_url: 'https://a.example.com/',
      events: ['*'],
    });
    expect((await env.http.patch(`/webhook_endpoints/${theirs.body.id}`, { status: 'disabled' })).status).toBe(404);
    expect((await env.http.delete(`/webhook_endpoints/${theirs.body.id}`)).status).toBe(404);
    expect((await env.http.get('/webhook_endpoints')).body.data).toEqual([]);
  });

  it('works with the official SDK: create, list, update, delete', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const created = await workos.webhooks.createWebhookEndpoint({
      endpointUrl: 'https://hooks.example.com/sdk',
      events: ['organization.created'],
    });
    expect(created).toMatchObject({
      object: 'webhook_endpoint',
      endpointUrl: 'https://hooks.example.com/sdk',
      status: 'enabled',
      events: ['organization.created'],
    });
    expect(created.secret.length).toBeGreaterThan(20);
    const list = await workos.webhooks.listWebhookEndpoints();
    expect(list.data.map((e) => e.id)).toEqual([created.id]);
    const updated = await workos.webhooks.updateWebhookEndpoint({ id: created.id, status: 'disabled' });
    expect(updated.status).toBe('disabled');
    await workos.webhooks.deleteWebhookEndpoint({ id: created.id });
    expect(await storedEndpoints(env)).toEqual([]);
  });
});
