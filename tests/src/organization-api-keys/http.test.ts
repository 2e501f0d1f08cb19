import { idempotencyKeys, organizationApiKeys } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

const storedKeys = (env: TestEnvironment) =>
  env.deps.db.select().from(organizationApiKeys).where(eq(organizationApiKeys.environmentId, env.environmentId));

async function organization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const res = await env.http.post('/organizations', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('REST wire: organization API keys', () => {
  it('answers the contract statuses: create 201, list 200, validate 200, delete 204 with no body', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const created = await env.http.post(`/organizations/${org}/api_keys`, {
      name: '  Reporting  ',
      permissions: ['reports:read', 'reports:read', 'admin'],
    });
    expect(created.status).toBe(201);
    // The name is trimmed; repeated permissions are kept once, in the order sent.
    expect(created.body).toMatchObject({ name: 'Reporting', permissions: ['reports:read', 'admin'] });
    const list = await env.http.get(`/organizations/${org}/api_keys?limit=5`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      object: 'list',
      data: [expect.not.objectContaining({ value: expect.anything() })],
      list_metadata: { before: null, after: null },
    });
    const validation = await env.http.post('/api_keys/validations', { value: created.body.value });
    expect(validation.status).toBe(200);
    expect(validation.body.api_key.id).toBe(created.body.id);
    const deleted = await env.http.delete(`/api_keys/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
  });

  it("keeps keys to their environment: another environment's key is 404 to delete and null to validate", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreignOrg = await organization(other);
    const foreign = await other.http.post(`/organizations/${foreignOrg}/api_keys`, { name: 'theirs' });
    const before = await snapshot(other);

    const validation = await env.http.post('/api_keys/validations', { value: foreign.body.value });
    expect(validation.status).toBe(200);
    expect(validation.body).toEqual({ api_key: null });
    const del = await env.http.delete(`/api_keys/${foreign.body.id}`);
    expect(del.status).toBe(404);
    expect(del.body).toEqual({ code: 'entity_not_found', message: `API key not found: '${foreign.body.id}'.` });
    for (const res of [
      await env.http.get(`/organizations/${foreignOrg}/api_keys`),
      await env.http.post(`/organizations/${foreignOrg}/api_keys`, { name: 'stolen' }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    expect(await snapshot(other)).toEqual(before);
    expect(await storedKeys(env)).toEqual([]);
    // The owner still validates it.
    expect((await other.http.post('/api_keys/validations', { value: foreign.body.value })).body.api_key.id).toBe(
      foreign.body.id,
    );
  });

  it.each([
    ['no name', {}, 'name'],
    ['an empty name', { name: '   ' }, 'name'],
    ['a name too long', { name: 'n'.repeat(257) }, 'name'],
    ['a number for a name', { name: 7 }, 'name'],
    ['permissions not an array', { name: 'k', permissions: 'admin' }, 'permissions'],
    ['a permission with a space', { name: 'k', permissions: ['a b'] }, 'permissions'],
    ['an empty permission', { name: 'k', permissions: [''] }, 'permissions'],
    ['101 permissions', { name: 'k', permissions: Array.from({ length: 101 }, (_, i) => `p${i}`) }, 'permissions'],
  ])('refuses %s with 422 and stores nothing', async (_label, body, field) => {
    const env = await newEnvironment();
    const org = await organization(env);
    const before = await snapshot(env);
    const res = await env.http.post(`/organizations/${org}/api_keys`, body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors.some((e: { field: string }) => e.field.split('.')[0] === field)).toBe(true);
    expect(await snapshot(env)).toEqual(before);
  });

  it.each([
    ['no value', {}],
    ['an empty value', { value: '' }],
    ['a number', { value: 42 }],
    ['a value too long', { value: 'v'.repeat(1025) }],
  ])('refuses a validation with %s (422)', async (_label, body) => {
    const env = await newEnvironment();
    const res = await env.http.post('/api_keys/validations', body);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].field).toBe('value');
  });

  it('replays a create with the same Idempotency-Key (value included), storing it sealed, not in clear', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const headers = { 'Idempotency-Key': 'create-key-1' };
    const first = await env.http.post(`/organizations/${org}/api_keys`, { name: 'once' }, headers);
    const again = await env.http.post(`/organizations/${org}/api_keys`, { name: 'once' }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedKeys(env)).toHaveLength(1);
    const [stored] = await env.deps.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.environmentId, env.environmentId), eq(idempotencyKeys.key, 'create-key-1')));
    expect(stored?.responseBody).toMatch(/^v1\./);
    expect(stored?.responseBody).not.toContain(first.body.value);
  });

  it("deletes an organization's keys with it: its values no longer validate", async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const key = await env.http.post(`/organizations/${org}/api_keys`, { name: 'k' });
    expect((await env.http.delete(`/organizations/${org}`)).status).toBe(204);
    expect(await storedKeys(env)).toEqual([]);
    expect((await env.http.post('/api_keys/validations', { value: key.body.value })).body).toEqual({ api_key: null });
  });
});
