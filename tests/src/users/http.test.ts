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
  'name',
  'first_name',
  'last_name',
  'profile_picture_url',
  'last_sign_in_at',
  'locale',
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

const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));

describe('bad user input answers 422 with its code and stores nothing', () => {
  it.each([
    ['a malformed e-mail', { email: 'ada@' }, 'email'],
    ['an e-mail with spaces inside', { email: 'ada lovelace@example.com' }, 'email'],
    ['metadata of 51 keys', { email: 'm@example.com', metadata: manyKeys }, 'metadata'],
    ['a metadata key of 41 characters', { email: 'm@example.com', metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
    ['a metadata value of 601 characters', { email: 'm@example.com', metadata: { k: 'v'.repeat(601) } }, 'metadata'],
    ['a locale that is no language tag', { email: 'm@example.com', locale: 'en_US!' }, 'locale'],
    ['a password of 7 characters', { email: 'm@example.com', password: 'seven77' }, 'password'],
    ['a numeric password', { email: 'm@example.com', password: 12345678 }, 'password'],
    [
      'a profile picture that is no http URL',
      { email: 'm@example.com', profile_picture_url: 'javascript:x' },
      'profile_picture_url',
    ],
    [
      'an unknown password_hash_type',
      { email: 'm@example.com', password_hash: 'x', password_hash_type: 'md5' },
      'password_hash_type',
    ],
  ])('create with %s', async (_label, body, field) => {
    const env = await newEnvironment();
    const res = await env.http.post('/user_management/users', body);
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    const fields: string[] = res.body.errors.map((e: { field: string }) => e.field);
    expect(
      fields.some((f) => f === field || f.startsWith(`${field}.`)),
      fields.join(),
    ).toBe(true);
    expect(await storedUsers(env)).toEqual([]);
  });

  it.each([
    [
      'password with password_hash',
      { password: 'long enough pw', password_hash: 'x', password_hash_type: 'bcrypt' },
      'password_conflict',
    ],
    ['password_hash without its type', { password_hash: 'x' }, 'password_hash_type_required'],
    ['password_hash_type without a hash', { password_hash_type: 'bcrypt' }, 'password_hash_type_required'],
    ['a name that differs from first and last name', { name: 'A B', first_name: 'C' }, 'name_mismatch'],
  ])('create or update with %s', async (_label, body, code) => {
    const env = await newEnvironment();
    const res = await env.http.post('/user_management/users', { email: uniqueEmail(), ...body });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors.map((e: { code: string }) => e.code)).toContain(code);
    expect(await storedUsers(env)).toEqual([]);
    const user = (await env.http.post('/user_management/users', { email: uniqueEmail() })).body;
    const update = await env.http.put(`/user_management/users/${user.id}`, body);
    expect(update.status, update.text).toBe(422);
    expect(update.body.errors.map((e: { code: string }) => e.code)).toContain(code);
    const [row] = await storedUsers(env);
    expect(row).toMatchObject({ passwordHash: null, passwordHashType: null, firstName: null, lastName: null });
    expect(row?.updatedAt.toISOString()).toBe(user.updated_at);
  });

  it('an unknown external id is 404 entity_not_found; one of another environment too', async () => {
    const env = await newEnvironment();
    await env.http.post('/user_management/users', { email: uniqueEmail(), external_id: 'only-here' });
    const missing = await env.http.get('/user_management/users/external_id/nobody');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('entity_not_found');
    const stranger = await newEnvironment();
    const foreign = await stranger.http.get('/user_management/users/external_id/only-here');
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('entity_not_found');
  });
});
