import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';

/** A request with its path sent exactly as written (fetch would resolve the dot segments itself). */
function rawRequest(base: string, method: string, path: string, apiKey: string) {
  const url = new URL(base);
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers: { Authorization: `Bearer ${apiKey}` } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('dot segments in a REST path', () => {
  it.each(['..', '%2e%2e', '%2E.', '.'])(
    'DELETE /organizations/:id/groups/%s names no resource: 404 route_not_found, the organization stays',
    async (dots) => {
      const env = await newEnvironment();
      const created = await env.http.post('/organizations', { name: 'Dots' });
      expect(created.status).toBe(201);
      const res = await rawRequest(
        env.world.url,
        'DELETE',
        `/organizations/${created.body.id}/groups/${dots}`,
        env.apiKey,
      );
      expect(res).toEqual({ status: 404, body: { code: 'route_not_found', message: 'No such route.' } });
      const after = await env.http.get(`/organizations/${created.body.id}`);
      expect(after.status).toBe(200);
      expect(after.body).toEqual(created.body);
    },
  );
});
