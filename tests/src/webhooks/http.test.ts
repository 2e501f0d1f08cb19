import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookEndpoints } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { isPublicAddress } from '@atrium/routers';
import { postSigned } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { getWorld, HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

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

describe('webhook endpoint URLs: global unicast addresses only', () => {
  /** The worker's world's deps behind a second server with WEBHOOKS_ALLOW_PRIVATE off. */
  let strict: { server: Server; url: string };
  beforeAll(async () => {
    const world = await getWorld();
    const app = createApp(
      { ...world.deps, config: { ...world.deps.config, webhooksAllowPrivate: false } },
      { baseUrl: 'http://127.0.0.1' },
    );
    const server = createServer(app.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    strict = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    await new Promise((resolve) => strict.server.close(resolve));
  });

  const strictHttp = (env: TestEnvironment) => new HttpClient(strict.url, { Authorization: `Bearer ${env.apiKey}` });
  const stored = (env: TestEnvironment) =>
    env.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.environmentId, env.environmentId));

  /** Every form of a metadata, loopback or otherwise non-global address a URL can carry. */
  const REFUSED: [string, string][] = [
    ['IPv4-compatible 169.254.169.254', 'http://[::169.254.169.254]/'],
    ['IPv4-compatible 169.254.169.254, hex', 'http://[::a9fe:a9fe]/'],
    ['IPv4-mapped 169.254.169.254', 'http://[::ffff:169.254.169.254]/'],
    ['IPv4-translated 169.254.169.254', 'http://[::ffff:0:a9fe:a9fe]/'],
    ['NAT64 169.254.169.254', 'http://[64:ff9b::a9fe:a9fe]/'],
    ['NAT64 local-use prefix', 'http://[64:ff9b:1::808:808]/'],
    ['6to4 169.254.169.254', 'http://[2002:a9fe:a9fe::1]/'],
    ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
    ['IPv4-compatible 127.0.0.1', 'http://[::127.0.0.1]/'],
    ['IPv4-mapped 127.0.0.1', 'http://[::ffff:127.0.0.1]/'],
    ['NAT64 127.0.0.1', 'http://[64:ff9b::7f00:1]/'],
    ['6to4 127.0.0.1', 'http://[2002:7f00:1::]/'],
    ['IPv4-compatible public address (unroutable)', 'http://[::8.8.8.8]/'],
    ['IPv6 unspecified', 'http://[::]/'],
    ['IPv6 loopback', 'http://[::1]/'],
    ['unique local fc00::/7', 'http://[fc00::1]/'],
    ['unique local fd00::', 'http://[fd12:3456::1]/'],
    ['link-local fe80::/10', 'http://[fe80::1]/'],
    ['site-local fec0::/10', 'http://[fec0::1]/'],
    ['IPv6 multicast', 'http://[ff02::1]/'],
    ['IPv6 documentation', 'http://[2001:db8::1]/'],
    ['IPv6 documentation 3fff::/20', 'http://[3fff::1]/'],
    ['IPv6 benchmarking', 'http://[2001:2::1]/'],
    ['169.254.169.254', 'http://169.254.169.254/latest/meta-data'],
    ['127.0.0.1', 'http://127.0.0.1/'],
    ['127.0.0.1 as a decimal integer', 'http://2130706433/'],
    ['10/8', 'http://10.0.0.1/'],
    ['172.16/12', 'http://172.16.0.1/'],
    ['192.168/16', 'http://192.168.1.1/'],
    ['CGNAT 100.64/10', 'http://100.64.0.1/'],
    ['0.0.0.0', 'http://0.0.0.0/'],
    ['0/8', 'http://0.1.2.3/'],
    ['multicast 224/4', 'http://224.0.0.1/'],
    ['reserved 240/4', 'http://240.0.0.1/'],
    ['broadcast', 'http://255.255.255.255/'],
    ['benchmarking 198.18/15', 'http://198.18.0.1/'],
    ['documentation 192.0.2/24', 'http://192.0.2.1/'],
    ['documentation 203.0.113/24', 'http://203.0.113.1/'],
    ['IETF protocol assignments 192.0.0/24', 'http://192.0.0.1/'],
    ['localhost', 'http://localhost/'],
  ];
  it.each(REFUSED)('refuses %s (%s) with 422 on create and update, storing nothing', async (_label, url) => {
    const env = await newEnvironment();
    const http = strictHttp(env);
    const created = await http.post('/webhook_endpoints', { endpoint_url: url, events: ['*'] });
    expect(created.status).toBe(422);
    expect(created.body).toMatchObject({
      code: 'invalid_request_parameters',
      errors: [{ field: 'endpoint_url', code: 'invalid_endpoint_url', message: expect.stringMatching(/address/) }],
    });
    expect(await stored(env)).toEqual([]);

    const ok = await http.post('/webhook_endpoints', { endpoint_url: 'https://93.184.215.14/hooks', events: ['*'] });
    expect(ok.status).toBe(201);
    const updated = await http.patch(`/webhook_endpoints/${ok.body.id}`, { endpoint_url: url });
    expect(updated.status).toBe(422);
    expect(updated.body.errors[0]).toMatchObject({ field: 'endpoint_url', code: 'invalid_endpoint_url' });
    expect((await stored(env)).map((row) => row.url)).toEqual(['https://93.184.215.14/hooks']);
  });

  it.each([
    'https://93.184.215.14/hooks',
    'https://[2606:4700:4700::1111]/hooks',
    'https://[::ffff:93.184.215.14]/hooks',
    'https://[2002:5db8:d70e::1]/hooks',
    'https://[64:ff9b::5db8:d70e]/hooks',
  ])('accepts the global address in %s', async (url) => {
    const env = await newEnvironment();
    const created = await strictHttp(env).post('/webhook_endpoints', { endpoint_url: url, events: ['*'] });
    expect(created.status).toBe(201);
    expect(await stored(env)).toHaveLength(1);
  });

  it('judges each address the same way as the table', () => {
    for (const address of ['::a9fe:a9fe', '::169.254.169.254', '::8.8.8.8', 'fe80::1%eth0', '1.2.3', 'x']) {
      expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: false });
    }
    for (const address of ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: true });
    }
  });

  it('refuses embedded loopback forms and names resolving to loopback at delivery, when connecting', async () => {
    const receiver = await new Receiver().start();
    try {
      const { port } = new URL(receiver.url);
      for (const host of ['[::ffff:127.0.0.1]', '[::127.0.0.1]', '[64:ff9b::7f00:1]', 'localhost']) {
        const outcome = await postSigned(`http://${host}:${port}/hooks`, 'secret', '{}', {
          timeoutMs: 5_000,
          allowPrivate: false,
          nowMs: Date.now(),
        });
        expect({ host, ok: outcome.ok, error: outcome.error }).toEqual({
          host,
          ok: false,
          error: 'refused: private, loopback or link-local address',
        });
      }
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});
