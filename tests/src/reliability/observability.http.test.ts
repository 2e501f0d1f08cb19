import { ensureAdminToken } from '@atrium/routers';
import { describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment } from '../helpers/world.ts';
import { adminTokenFor } from './own-app.ts';

describe('GET /metrics', () => {
  it('is refused without the admin token and with an API key', async () => {
    const env = await newEnvironment();
    const anon = await new HttpClient(env.world.url).get('/metrics');
    expect(anon.status).toBe(401);
    expect(anon.body).toMatchObject({ code: 'unauthorized' });
    expect((await env.http.get('/metrics')).status).toBe(401);
  });

  it('serves request counts and latency by route template and status, and database gauges', async () => {
    const env = await newEnvironment();
    const token = adminTokenFor('metrics');
    await ensureAdminToken(env.deps, token);
    const created = await env.http.post('/organizations', { name: 'Metered' });
    await env.http.get(`/organizations/${created.body.id}`);
    await env.http.get('/organizations/org_missing');
    await env.http.get(`/trpc/organizations.get?input=${encodeURIComponent(JSON.stringify({ id: created.body.id }))}`);
    const res = await new HttpClient(env.world.url, { Authorization: `Bearer ${token}` }).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = res.text;
    expect(text).toMatch(/atrium_http_requests_total\{method="GET",route="\/organizations\/\{id\}",status="200"\} \d+/);
    expect(text).toMatch(/atrium_http_requests_total\{method="GET",route="\/organizations\/\{id\}",status="404"\} \d+/);
    expect(text).toMatch(/atrium_http_requests_total\{method="POST",route="\/organizations",status="201"\} \d+/);
    // tRPC calls are one series, whatever the procedure or batch.
    expect(text).toMatch(/atrium_http_requests_total\{method="GET",route="\/trpc",status="200"\} \d+/);
    expect(text).toContain(
      'atrium_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/organizations/{id}"',
    );
    expect(text).toContain('atrium_db_up 1');
    expect(text).toContain('atrium_db_pool_max_connections');
    expect(text).toContain('# TYPE atrium_worker_queue_depth gauge');
    expect(text).toContain('# TYPE atrium_webhook_delivery_failures_total counter');
    // Ids never become labels: one series per route template.
    expect(text).not.toContain(created.body.id);
  });
});

describe('security headers', () => {
  it('sets helmet headers on API answers, errors and pages', async () => {
    const env = await newEnvironment();
    for (const res of [
      await env.http.get('/organizations'),
      await env.http.get('/organizations/org_missing'),
      await env.http.get('/healthz'),
      await env.http.get(`/trpc/organizations.list?input=${encodeURIComponent('{}')}`),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('strict-transport-security')).toContain('max-age=');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
    for (const api of [
      await env.http.get('/organizations'),
      await env.http.get(`/trpc/organizations.list?input=${encodeURIComponent('{}')}`),
    ]) {
      expect(api.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(api.headers.get('x-request-id')).toMatch(/\S/);
    }
  });
});
