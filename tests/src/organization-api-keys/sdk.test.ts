import { organizationApiKeys } from '@atrium/db';
import { NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const storedKeys = (env: TestEnvironment) =>
  env.deps.db.select().from(organizationApiKeys).where(eq(organizationApiKeys.environmentId, env.environmentId));

const keyEvents = async (env: TestEnvironment) =>
  (await storedEvents(env)).filter((e) => e.event.startsWith('api_key.'));

describe('official SDK: apiKeys (organization API keys)', () => {
  it('creates (value shown once), lists, validates and deletes, with every required field', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });

    const created = await workos.apiKeys.createOrganizationApiKey({
      organizationId: org.id,
      name: 'CI key',
      permissions: ['posts:read', 'posts:write'],
    });
    expect(created).toEqual({
      object: 'api_key',
      id: expect.stringMatching(/^api_key_[0-9A-Z]{26}$/),
      owner: { type: 'organization', id: org.id },
      name: 'CI key',
      obfuscatedValue: `sk_org_…${created.value.slice(-4)}`,
      value: expect.stringMatching(/^sk_org_[0-9A-Za-z]{40}$/),
      lastUsedAt: null,
      permissions: ['posts:read', 'posts:write'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: created.createdAt,
    });
    const { value, ...shown } = created;

    // Stored hashed: the value appears nowhere in the row.
    const [row] = await storedKeys(env);
    expect(row?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(value);

    const plain = await workos.apiKeys.createOrganizationApiKey({ organizationId: org.id, name: 'Plain' });
    expect(plain.permissions).toEqual([]);

    const listed = await workos.apiKeys.listOrganizationApiKeys({ organizationId: org.id, order: 'asc' });
    expect(listed.data).toEqual([shown, (({ value: _v, ...rest }) => rest)(plain)]);
    expect(listed.data.some((k) => 'value' in k && (k as { value?: string }).value)).toBe(false);
    const all = await (await workos.apiKeys.listOrganizationApiKeys({ organizationId: org.id })).autoPagination();
    expect(all.map((k) => k.id).sort()).toEqual([created.id, plain.id].sort());

    const valid = await workos.apiKeys.createValidation({ value });
    expect(valid).toEqual({ apiKey: shown });
    // Validation changes nothing on the key.
    expect(await storedKeys(env)).toEqual(await storedKeys(env));
    const [after] = (await storedKeys(env)).filter((k) => k.id === created.id);
    expect(after).toEqual(row);

    expect(await workos.apiKeys.createValidation({ value: `${value}x` })).toEqual({ apiKey: null });
    expect(await workos.apiKeys.createValidation({ value: 'sk_test_nope' })).toEqual({ apiKey: null });

    await workos.apiKeys.deleteApiKey(created.id);
    expect(await workos.apiKeys.createValidation({ value })).toEqual({ apiKey: null });
    await expect(workos.apiKeys.deleteApiKey(created.id)).rejects.toBeInstanceOf(NotFoundException);
    expect((await storedKeys(env)).map((k) => k.id)).toEqual([plain.id]);

    const recorded = await keyEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['api_key.created', 'api_key.created', 'api_key.revoked']);
    expect(recorded[0]?.data).toEqual({
      object: 'api_key',
      id: created.id,
      owner: { type: 'organization', id: org.id },
      name: 'CI key',
      obfuscated_value: created.obfuscatedValue,
      last_used_at: null,
      permissions: ['posts:read', 'posts:write'],
      created_at: created.createdAt,
      updated_at: created.updatedAt,
    });
    expect(recorded[2]?.data).toEqual(recorded[0]?.data);
    expect(JSON.stringify(recorded)).not.toContain(value);
    expect(recorded.every((e) => e.organizationId === org.id)).toBe(true);
  });

  it('refuses bad input with 422 and an unknown organization with 404, storing nothing', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await expect(workos.apiKeys.createOrganizationApiKey({ organizationId: org.id, name: '' })).rejects.toBeInstanceOf(
      UnprocessableEntityException,
    );
    await expect(
      workos.apiKeys.createOrganizationApiKey({ organizationId: org.id, name: 'x', permissions: ['has space'] }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    await expect(
      workos.apiKeys.createOrganizationApiKey({ organizationId: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ', name: 'x' }),
    ).rejects.toBeInstanceOf(NotFoundException);
    await expect(
      workos.apiKeys.listOrganizationApiKeys({ organizationId: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
    ).rejects.toBeInstanceOf(NotFoundException);
    await expect(workos.apiKeys.createValidation({ value: '' })).rejects.toBeInstanceOf(UnprocessableEntityException);
    expect(await storedKeys(env)).toEqual([]);
    expect(await keyEvents(env)).toEqual([]);
  });
});

describe('official SDK: userManagement user API keys', () => {
  it('createUserApiKey (value once, capped at the member), listUserApiKeys, createValidation, deleteApiKey', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    await env.http.post('/authorization/permissions', { slug: 'posts:read', name: 'Read' });
    await env.http.post('/authorization/permissions', { slug: 'posts:write', name: 'Write' });
    await env.http.post('/authorization/roles', { slug: 'reader', name: 'Reader' });
    await env.http.put('/authorization/roles/reader/permissions', { permissions: ['posts:read'] });
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const user = await workos.userManagement.createUser({ email: `sdk-keys-${process.pid}@example.com` });
    await workos.userManagement.createOrganizationMembership({
      userId: user.id,
      organizationId: org.id,
      roleSlug: 'reader',
    });

    const created = await workos.userManagement.createUserApiKey(user.id, {
      organizationId: org.id,
      name: 'CLI',
      permissions: ['posts:read'],
    });
    expect(created).toMatchObject({
      object: 'api_key',
      owner: { type: 'user', id: user.id, organizationId: org.id },
      name: 'CLI',
      permissions: ['posts:read'],
      value: expect.stringMatching(/^sk_org_/),
    });
    await expect(
      workos.userManagement.createUserApiKey(user.id, {
        organizationId: org.id,
        name: 'x',
        permissions: ['posts:write'],
      }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);

    const listed = await workos.userManagement.listUserApiKeys(user.id, { organizationId: org.id });
    expect(listed.data.map((k) => k.id)).toEqual([created.id]);
    const valid = await workos.apiKeys.createValidation({ value: created.value });
    expect(valid.apiKey?.id).toBe(created.id);
    await workos.apiKeys.deleteApiKey(created.id);
    expect(await workos.apiKeys.createValidation({ value: created.value })).toEqual({ apiKey: null });
    await expect(workos.userManagement.listUserApiKeys('user_01HZZZZZZZZZZZZZZZZZZZZZZZ')).rejects.toBeInstanceOf(
      NotFoundException,
    );
    expect(await storedKeys(env)).toEqual([]);
  });
});
