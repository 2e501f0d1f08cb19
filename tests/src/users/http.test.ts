import { users } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const USER_KEYS = [
  'object',
  'id',
  'email',
  'email_verified',
  'first_name',
  'last_name',
  'profile_picture_url',
  'last_sign_in_at',
  'external_id',
  'metadata',
  'created_at',
  'updated_at',
].sort();

async function storedUsers(env: TestEnvironment) {
  return env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
}

describe('users over HTTP', () => {
  it('POST 201, GET, list with the email filter, PUT, DELETE 204', async () => {
    const env = await newEnvironment();
    const email = uniqueEmail('Grace');
    const created = await env.http.post('/user_management/users', { email, first_name: 'Grace' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(USER_KEYS);
    expect(created.body).toMatchObject({ object: 'user', email, first_name: 'Grace', last_name: null, metadata: {} });

    const read = await env.http.get(`/user_management/users/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    await env.http.post('/user_management/users', { email: uniqueEmail('other') });
    const filtered = await env.http.get(`/user_management/users?email=${encodeURIComponent(email.toUpperCase())}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body).toEqual({
      object: 'list',
      data: [created.body],
      list_metadata: { before: null, after: null },
    });
    expect((await env.http.get('/user_management/users?limit=1')).body.list_metadata.after).not.toBeNull();

    const put = await env.http.put(`/user_management/users/${created.body.id}`, { last_name: 'Hopper' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', email });

    const del = await env.http.delete(`/user_management/users/${created.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await env.http.get(`/user_management/users/${created.body.id}`)).status).toBe(404);
  });

  it('a duplicate email is 409 and a missing one 422, leaving nothing behind', async () => {
    const env = await newEnvironment();
    const email = uniqueEmail();
    await env.http.post('/user_management/users', { email });
    const dup = await env.http.post('/user_management/users', { email: email.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('email_not_available');
    const missing = await env.http.post('/user_management/users', { first_name: 'X' });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({
      code: 'invalid_request_parameters',
      message: 'Validation failed.',
      errors: [{ field: 'email', code: 'email_required', message: 'email is required' }],
    });
    expect(await storedUsers(env)).toHaveLength(1);
  });

  it('another environment key cannot see, change or delete the user', async () => {
    const env = await newEnvironment();
    const created = (await env.http.post('/user_management/users', { email: uniqueEmail() })).body;
    const stranger = await newEnvironment();
    expect((await stranger.http.get(`/user_management/users/${created.id}`)).status).toBe(404);
    expect((await stranger.http.put(`/user_management/users/${created.id}`, { first_name: 'X' })).status).toBe(404);
    expect((await stranger.http.delete(`/user_management/users/${created.id}`)).status).toBe(404);
    expect((await env.http.get(`/user_management/users/${created.id}`)).body).toEqual(created);
  });
});
