import { describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';

describe('smoke', () => {
  it('creates and reads an organization over HTTP and tRPC', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/organizations', { name: 'Acme' });
    expect(created.status).toBe(201);
    const read = await env.caller.organizations.get({ id: created.body.id });
    expect(read.name).toBe('Acme');
  });
});
