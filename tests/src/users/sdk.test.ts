import { users } from '@atrium/db';
import { verifyPassword } from '@atrium/routers';
import { NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/** Every field the SDK's `User` interface declares (all of them required). */
const USER_FIELDS = [
  'object',
  'id',
  'email',
  'emailVerified',
  'profilePictureUrl',
  'name',
  'firstName',
  'lastName',
  'lastSignInAt',
  'locale',
  'createdAt',
  'updatedAt',
  'externalId',
  'metadata',
].sort();

async function storedUser(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(users).where(eq(users.id, id));
  return row;
}

describe('users through the official SDK', () => {
  it('createUser, getUser, getUserByExternalId, updateUser, listUsers and deleteUser echo every field', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const email = uniqueEmail('ada');

    const created = await workos.userManagement.createUser({
      email,
      password: 'correct horse battery staple',
      firstName: 'Ada',
      lastName: 'Lovelace',
      emailVerified: true,
      externalId: 'ada-1',
      metadata: { team: 'engines' },
    });
    expect(Object.keys(created).sort()).toEqual(USER_FIELDS);
    expect(created).toMatchObject({
      object: 'user',
      email,
      emailVerified: true,
      profilePictureUrl: null,
      name: 'Ada Lovelace',
      firstName: 'Ada',
      lastName: 'Lovelace',
      lastSignInAt: null,
      locale: null,
      externalId: 'ada-1',
      metadata: { team: 'engines' },
    });
    expect(created.id).toMatch(/^user_[0-9A-Z]{26}$/);
    expect(created.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    // The password is stored as a scrypt hash that verifies, and never answered.
    const row = await storedUser(env, created.id);
    expect(row?.passwordHashType).toBe('scrypt');
    expect(row?.passwordHash).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
    expect(await verifyPassword(env.environmentId, 'correct horse battery staple', row?.passwordHash ?? '')).toBe(true);
    expect(await verifyPassword(env.environmentId, 'wrong horse battery staple', row?.passwordHash ?? '')).toBe(false);
    const raw = await env.http.get(`/user_management/users/${created.id}`);
    expect(raw.text).not.toMatch(/password/i);

    expect(await workos.userManagement.getUser(created.id)).toEqual(created);
    expect(await workos.userManagement.getUserByExternalId('ada-1')).toEqual(created);

    const updated = await workos.userManagement.updateUser({
      userId: created.id,
      name: 'Augusta Ada King',
      locale: 'pt-BR',
      password: 'a new password, longer',
      metadata: { team: null, role: 'analyst' },
      externalId: 'ada-2',
    });
    expect(updated).toMatchObject({
      id: created.id,
      name: 'Augusta Ada King',
      firstName: 'Augusta',
      lastName: 'Ada King',
      locale: 'pt-BR',
      externalId: 'ada-2',
      metadata: { role: 'analyst' },
      emailVerified: true,
    });
    const after = await storedUser(env, created.id);
    expect(await verifyPassword(env.environmentId, 'a new password, longer', after?.passwordHash ?? '')).toBe(true);
    expect(after?.passwordHash).not.toBe(row?.passwordHash);
    await expect(workos.userManagement.getUserByExternalId('ada-1')).rejects.toBeInstanceOf(NotFoundException);
    expect(await workos.userManagement.getUserByExternalId('ada-2')).toEqual(updated);

    // List filters as the SDK sends them: e-mail, and organization.
    const other = await workos.userManagement.createUser({ email: uniqueEmail('bob') });
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await workos.userManagement.createOrganizationMembership({ userId: other.id, organizationId: org.id });
    expect((await workos.userManagement.listUsers({ email })).data).toEqual([updated]);
    expect((await workos.userManagement.listUsers({ organizationId: org.id })).data.map((u) => u.id)).toEqual([
      other.id,
    ]);
    expect((await workos.userManagement.listUsers()).data.map((u) => u.id)).toEqual([other.id, created.id]);

    await workos.userManagement.deleteUser(created.id);
    await expect(workos.userManagement.getUser(created.id)).rejects.toBeInstanceOf(NotFoundException);

    // The events carry the user as the API shows it: name and locale included, never a password.
    const wireCreated = (await storedEventData(env, 'user.created'))[0];
    expect(wireCreated).toMatchObject({ name: 'Ada Lovelace', locale: null, external_id: 'ada-1' });
    const wireUpdated = (await storedEventData(env, 'user.updated'))[0];
    expect(wireUpdated).toMatchObject({ name: 'Augusta Ada King', locale: 'pt-BR', first_name: 'Augusta' });
    const wireDeleted = (await storedEventData(env, 'user.deleted'))[0];
    expect(wireDeleted).toMatchObject({ id: created.id, locale: 'pt-BR' });
    for (const data of [wireCreated, wireUpdated, wireDeleted]) {
      expect(Object.keys(data ?? {}).sort()).toEqual(Object.keys(raw.body).sort());
      expect(JSON.stringify(data)).not.toMatch(/password/i);
    }
  });

  it('a name alone is split at its first space and reads back as sent; null clears both parts', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const cher = await workos.userManagement.createUser({ email: uniqueEmail('cher'), name: 'Cher' });
    expect(cher).toMatchObject({ name: 'Cher', firstName: 'Cher', lastName: null });
    const full = await env.http.put(`/user_management/users/${cher.id}`, { name: null });
    expect(full.body).toMatchObject({ name: null, first_name: null, last_name: null });
    const both = await env.http.put(`/user_management/users/${cher.id}`, {
      name: 'Cher Sarkisian',
      last_name: 'Sarkisian',
    });
    expect(both.status).toBe(422);
    expect(both.body.errors[0]).toMatchObject({ field: 'name', code: 'name_mismatch' });
  });

  it('an imported password hash is stored with its type; refusals answer 422 through the SDK', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const bcrypt = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
    const user = await workos.userManagement.createUser({
      email: uniqueEmail('imported'),
      passwordHash: bcrypt,
      passwordHashType: 'bcrypt',
    });
    expect(await storedUser(env, user.id)).toMatchObject({ passwordHash: bcrypt, passwordHashType: 'bcrypt' });
    const refused = workos.userManagement.createUser({ email: uniqueEmail('short'), password: 'short' });
    await expect(refused).rejects.toBeInstanceOf(UnprocessableEntityException);
    const badLocale = workos.userManagement.updateUser({ userId: user.id, locale: 'not a locale' });
    await expect(badLocale).rejects.toBeInstanceOf(UnprocessableEntityException);
    expect((await workos.userManagement.getUser(user.id)).locale).toBeNull();
  });
});
