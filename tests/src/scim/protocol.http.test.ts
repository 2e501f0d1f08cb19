import { directoryGroups, directoryUsers } from '@atrium/db';
import { type ApiError, scimTypeOf, toApiError } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import {
  ENTERPRISE,
  ERROR_SCHEMA,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  newDirectory,
  scimUser,
  type TestDirectory,
  USER_SCHEMA,
} from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

async function nothingStored(d: TestDirectory) {
  const db = d.env.deps.db;
  expect(await db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId))).toHaveLength(0);
  expect(await db.select().from(directoryGroups).where(eq(directoryGroups.directoryId, d.directoryId))).toHaveLength(0);
}

describe('SCIM discovery', () => {
  it('ServiceProviderConfig declares what is supported', async () => {
    const d = await newDirectory();
    const res = await d.scim.get(`${d.base}/ServiceProviderConfig`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(res.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 100 },
      changePassword: { supported: false },
      sort: { supported: true },
      etag: { supported: true },
    });
  });

  it('ResourceTypes and Schemas list User (with the enterprise extension) and Group', async () => {
    const d = await newDirectory();
    const types = await d.scim.get(`${d.base}/ResourceTypes`);
    expect(types.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 2 });
    expect(types.body.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
    expect(types.body.Resources[0].schemaExtensions).toEqual([{ schema: ENTERPRISE, required: false }]);
    expect((await d.scim.get(`${d.base}/ResourceTypes/Group`)).body.endpoint).toBe('/Groups');
    const schemas = await d.scim.get(`${d.base}/Schemas`);
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toEqual([USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE]);
    const user = await d.scim.get(`${d.base}/Schemas/${USER_SCHEMA}`);
    expect(user.body.attributes.find((a: { name: string }) => a.name === 'userName')).toMatchObject({
      required: true,
      uniqueness: 'server',
    });
    expect((await d.scim.get(`${d.base}/Schemas/urn:nope`)).status).toBe(404);
  });
});

describe('SCIM malformed input', () => {
  it('invalid JSON is 400 invalidSyntax; nothing stored', async () => {
    const d = await newDirectory();
    const res = await d.scim.request('POST', `${d.base}/Users`, { raw: '{"userName": ' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidSyntax' });
    await nothingStored(d);
  });

  it('accepts application/json and application/scim+json; refuses other content types with 415', async () => {
    const d = await newDirectory();
    const json = await d.scim.request('POST', `${d.base}/Users`, {
      raw: JSON.stringify(scimUser()),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(json.status).toBe(201);
    const scim = await d.scim.request('POST', `${d.base}/Users`, {
      raw: JSON.stringify(scimUser()),
      headers: { 'Content-Type': 'application/scim+json' },
    });
    expect(scim.status).toBe(201);
    const text = await d.scim.request('POST', `${d.base}/Groups`, {
      raw: JSON.stringify({ displayName: 'x' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '415' });
  });

  it('a body over 1 MiB is 413 in SCIM shape', async () => {
    const d = await newDirectory();
    const res = await d.scim.post(`${d.base}/Users`, scimUser({ title: 'x'.repeat(1024 * 1024 + 10) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '413' });
    await nothingStored(d);
  });

  it.each([
    ['no userName', {}],
    ['empty userName', { userName: '  ' }],
    ['userName not a string', { userName: 42 }],
    ['active not a boolean', { userName: 'a@example.com', active: 'maybe' }],
    ['emails not an array', { userName: 'a@example.com', emails: 'a@example.com' }],
    ['email value not a string', { userName: 'a@example.com', emails: [{ value: 3 }] }],
    ['name not an object', { userName: 'a@example.com', name: 'Ada' }],
    ['externalId not a string', { userName: 'a@example.com', externalId: 7 }],
    ['a JSON array', [1, 2]],
  ])('User with %s is 400 invalidValue and nothing stored', async (_name, body) => {
    const d = await newDirectory();
    const res = await d.scim.post(`${d.base}/Users`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400' });
    expect(['invalidValue', 'invalidSyntax']).toContain(res.body.scimType);
    await nothingStored(d);
  });

  it.each([
    ['no displayName', {}],
    ['displayName not a string', { displayName: 1 }],
    ['members not objects', { displayName: 'G', members: ['x'] }],
    ['unknown member', { displayName: 'G', members: [{ value: 'directory_user_01HXXXXXXXXXXXXXXXXXXXXXXX' }] }],
  ])('Group with %s is 400 invalidValue and nothing stored', async (_name, body) => {
    const d = await newDirectory();
    const res = await d.scim.post(`${d.base}/Groups`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidValue' });
    await nothingStored(d);
  });

  it('unknown endpoints are 404 and wrong methods 405 with Allow, in SCIM shape', async () => {
    const d = await newDirectory();
    const unknown = await d.scim.get(`${d.base}/Bulk`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '404' });
    const method = await d.scim.request('DELETE', `${d.base}/Users`);
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('GET, POST');
    expect(method.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '405' });
    expect((await d.scim.get(`${d.base}/users`)).status).toBe(200);
  });
});

describe('SCIM error types', () => {
  it('a 409 of a duplicate is `uniqueness`; a 409 of a concurrent write that lost has no scimType', () => {
    // Okta and Entra read `uniqueness` on a create as "the user exists" and go on to match it.
    const duplicate = toApiError({ code: '23505', constraint_name: 'directory_users_user_name_unique' });
    expect(duplicate?.status).toBe(409);
    expect(scimTypeOf(duplicate as ApiError)).toBe('uniqueness');
    for (const code of ['40P01', '40001']) {
      const lost = toApiError({ code });
      expect(lost?.status).toBe(409);
      expect(scimTypeOf(lost as ApiError)).toBeUndefined();
    }
  });
});
