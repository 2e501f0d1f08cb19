import { directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ENTERPRISE, ERROR_SCHEMA, LIST_SCHEMA, newDirectory, scimUser, USER_SCHEMA } from './helpers.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function storedUsers(d: { env: { deps: { db: any } }; directoryId: string }) {
  return d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId));
}

describe('SCIM /Users', () => {
  it('POST creates a user (201, Location, ETag, meta) and GET reads it back', async () => {
    const d = await newDirectory();
    const body = scimUser({ [ENTERPRISE]: { department: 'Eng', employeeNumber: '42' }, title: 'Engineer' });
    const res = await d.scim.post(`${d.base}/Users`, body);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(res.body.id).toMatch(/^directory_user_[0-9A-Z]{26}$/);
    expect(res.body).toMatchObject({
      schemas: [USER_SCHEMA],
      userName: body.userName,
      externalId: body.externalId,
      active: true,
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      [ENTERPRISE]: { department: 'Eng', employeeNumber: '42' },
    });
    const location = `${d.baseUrl}/Users/${res.body.id}`;
    expect(res.headers.get('location')).toBe(location);
    expect(res.headers.get('etag')).toBe('W/"1"');
    expect(res.body.meta).toEqual({
      resourceType: 'User',
      created: expect.stringMatching(ISO),
      lastModified: expect.stringMatching(ISO),
      location,
      version: 'W/"1"',
    });

    const got = await d.scim.get(`${d.base}/Users/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.headers.get('etag')).toBe('W/"1"');

    const [row] = await storedUsers(d);
    expect(row).toMatchObject({
      userName: body.userName,
      email: String(body.userName).toLowerCase(),
      firstName: 'Ada',
      lastName: 'Lovelace',
      state: 'active',
      customAttributes: { department: 'Eng', employee_number: '42', job_title: 'Engineer' },
    });
  });

  it('GET with If-None-Match of the current ETag answers 304', async () => {
    const d = await newDirectory();
    const created = await d.scim.post(`${d.base}/Users`, scimUser());
    const res = await d.scim.get(`${d.base}/Users/${created.body.id}`, { 'If-None-Match': 'W/"1"' });
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
  });

  it('a repeated POST of an existing userName (any case) is 409 uniqueness, nothing stored', async () => {
    const d = await newDirectory();
    const body = scimUser();
    expect((await d.scim.post(`${d.base}/Users`, body)).status).toBe(201);
    const again = await d.scim.post(`${d.base}/Users`, {
      ...body,
      userName: String(body.userName).toUpperCase(),
      externalId: 'other',
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      schemas: [ERROR_SCHEMA],
      status: '409',
      scimType: 'uniqueness',
      detail: expect.any(String),
    });
    expect(await storedUsers(d)).toHaveLength(1);
  });

  it('Entra string booleans are booleans; active "False" stores an inactive user', async () => {
    const d = await newDirectory({ type: 'azure scim v2.0' });
    const res = await d.scim.post(
      `${d.base}/Users`,
      scimUser({ active: 'False', emails: [{ primary: 'True', type: 'work', value: 'Entra@Example.com' }] }),
    );
    expect(res.status).toBe(201);
    expect(res.body.active).toBe(false);
    expect(res.body.emails).toEqual([{ primary: true, type: 'work', value: 'Entra@Example.com' }]);
    const [row] = await storedUsers(d);
    expect(row.state).toBe('inactive');
    expect(row.email).toBe('entra@example.com');
  });

  it('lists users with ListResponse, startIndex and count', async () => {
    const d = await newDirectory();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await d.scim.post(`${d.base}/Users`, scimUser())).body.id);
    const page = await d.scim.get(`${d.base}/Users?startIndex=2&count=2`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 5, itemsPerPage: 2, startIndex: 2 });
    expect(page.body.Resources.map((r: { id: string }) => r.id)).toEqual(ids.slice(1, 3));
    const past = await d.scim.get(`${d.base}/Users?startIndex=10`);
    expect(past.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    const none = await d.scim.get(`${d.base}/Users?count=0`);
    expect(none.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
  });
});
