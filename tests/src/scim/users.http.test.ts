import { directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { ENTERPRISE, ERROR_SCHEMA, LIST_SCHEMA, newDirectory, scimUser, USER_SCHEMA } from './helpers.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function storedUsers(d: { env: { deps: { db: any } }; directoryId: string }) {
  return d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId));
}

beforeAll(() => getWorld().then(() => undefined));

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

  it('a password (Okta password sync) is neither stored nor returned, by POST, PUT or PATCH', async () => {
    const d = await newDirectory();
    const body = scimUser({ password: 'hunter2-secret' });
    const created = await d.scim.post(`${d.base}/Users`, body);
    expect(created.status).toBe(201);
    expect(created.body.password).toBeUndefined();
    const id = created.body.id;
    await d.scim.put(`${d.base}/Users/${id}`, { ...body, password: 'other-secret' });
    const patched = await d.scim.patch(`${d.base}/Users/${id}`, {
      Operations: [{ op: 'replace', path: 'password', value: 'third-secret' }],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.password).toBeUndefined();
    const [row] = await storedUsers(d);
    expect(JSON.stringify(row)).not.toMatch(/secret/);
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

describe('SCIM /Users writes', () => {
  it('PUT replaces the user; active:false deactivates and never deletes (Okta)', async () => {
    const d = await newDirectory();
    const body = scimUser();
    const created = await d.scim.post(`${d.base}/Users`, body);
    const id = created.body.id;
    const put = await d.scim.put(`${d.base}/Users/${id}`, {
      ...body,
      id,
      active: false,
      name: { givenName: 'Grace', familyName: 'Hopper' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, active: false, name: { givenName: 'Grace', familyName: 'Hopper' } });
    expect(put.headers.get('etag')).toBe('W/"2"');
    const [row] = await storedUsers(d);
    expect(row).toMatchObject({ state: 'inactive', firstName: 'Grace', lastName: 'Hopper', version: 2 });
    const got = await d.scim.get(`${d.base}/Users/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.active).toBe(false);
  });

  it('PUT may not change the id (400 mutability); unknown id is 404', async () => {
    const d = await newDirectory();
    const created = await d.scim.post(`${d.base}/Users`, scimUser());
    const res = await d.scim.put(`${d.base}/Users/${created.body.id}`, { ...created.body, id: 'directory_user_X' });
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe('mutability');
    const missing = await d.scim.put(`${d.base}/Users/directory_user_01HXXXXXXXXXXXXXXXXXXXXXXX`, scimUser());
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '404' });
  });

  it("PATCH: Entra's Replace, string booleans, pathless dotted keys, emails filter paths, the enterprise extension", async () => {
    const d = await newDirectory({ type: 'azure scim v2.0' });
    const created = await d.scim.post(`${d.base}/Users`, scimUser());
    const id = created.body.id;
    const res = await d.scim.patch(`${d.base}/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'new@example.com' },
        { op: 'Replace', value: { 'name.givenName': 'Katherine', displayName: 'K J' } },
        { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Flight' },
        { op: 'Add', path: 'title', value: 'Mathematician' },
        { op: 'Replace', path: 'active', value: 'False' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      active: false,
      displayName: 'K J',
      title: 'Mathematician',
      name: { givenName: 'Katherine', familyName: 'Lovelace' },
      emails: [{ primary: true, type: 'work', value: 'new@example.com' }],
      [ENTERPRISE]: { department: 'Flight' },
    });
    expect(res.headers.get('etag')).toBe('W/"2"');
    const [row] = await storedUsers(d);
    expect(row).toMatchObject({
      email: 'new@example.com',
      firstName: 'Katherine',
      state: 'inactive',
      customAttributes: { department: 'Flight', job_title: 'Mathematician' },
    });
  });

  it('PATCH pathless {active:false} (Okta) deactivates; remove of an attribute drops it', async () => {
    const d = await newDirectory();
    const created = await d.scim.post(`${d.base}/Users`, scimUser({ title: 'T' }));
    const id = created.body.id;
    const res = await d.scim.patch(`${d.base}/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'replace', value: { active: false } },
        { op: 'remove', path: 'title' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(false);
    expect(res.body.title).toBeUndefined();
    const rows = await storedUsers(d);
    expect(rows).toHaveLength(1);
    expect(rows[0].state).toBe('inactive');
  });

  it('If-Match: the current version passes, a stale one is 412 and nothing changes', async () => {
    const d = await newDirectory();
    const body = scimUser();
    const created = await d.scim.post(`${d.base}/Users`, body);
    const id = created.body.id;
    const stale = await d.scim.put(`${d.base}/Users/${id}`, { ...body, title: 'x' }, { 'If-Match': 'W/"7"' });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '412' });
    const patchStale = await d.scim.patch(
      `${d.base}/Users/${id}`,
      { Operations: [{ op: 'replace', path: 'title', value: 'y' }] },
      { 'If-Match': 'W/"2"' },
    );
    expect(patchStale.status).toBe(412);
    const deleteStale = await d.scim.delete(`${d.base}/Users/${id}`, { 'If-Match': '"5"' });
    expect(deleteStale.status).toBe(412);
    const [row] = await storedUsers(d);
    expect(row.version).toBe(1);
    expect(row.attributes.title).toBeUndefined();
    const fresh = await d.scim.put(`${d.base}/Users/${id}`, { ...body, title: 'x' }, { 'If-Match': 'W/"1"' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.meta.version).toBe('W/"2"');
  });

  it('DELETE removes the user (204), then 404', async () => {
    const d = await newDirectory();
    const created = await d.scim.post(`${d.base}/Users`, scimUser());
    const res = await d.scim.delete(`${d.base}/Users/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await storedUsers(d)).toHaveLength(0);
    expect((await d.scim.get(`${d.base}/Users/${created.body.id}`)).status).toBe(404);
    expect((await d.scim.delete(`${d.base}/Users/${created.body.id}`)).status).toBe(404);
  });
});

describe('SCIM /Users filters and projection', () => {
  async function seeded() {
    const d = await newDirectory();
    const a = await d.scim.post(
      `${d.base}/Users`,
      scimUser({
        userName: 'Alice@Example.com',
        externalId: 'ext-alice',
        displayName: 'Alice A',
        emails: [
          { type: 'work', value: 'alice@example.com', primary: true },
          { type: 'home', value: 'alice@home.test' },
        ],
        [ENTERPRISE]: { department: 'Sales' },
      }),
    );
    const b = await d.scim.post(
      `${d.base}/Users`,
      scimUser({
        userName: 'bob@example.com',
        externalId: 'ext-bob',
        displayName: 'Bob B',
        active: false,
        emails: [{ type: 'work', value: 'bob@example.com' }],
      }),
    );
    return { d, alice: a.body.id as string, bob: b.body.id as string };
  }

  const ids = (res: { body: { Resources: Array<{ id: string }> } }) => res.body.Resources.map((r) => r.id);

  it('answers the filters identity providers send', async () => {
    const { d, alice, bob } = await seeded();
    const q = (filter: string) => d.scim.get(`${d.base}/Users?filter=${encodeURIComponent(filter)}`);
    expect(ids(await q('userName eq "alice@example.com"'))).toEqual([alice]);
    expect(ids(await q('USERNAME eq "ALICE@EXAMPLE.COM"'))).toEqual([alice]);
    expect(ids(await q('externalId eq "ext-bob"'))).toEqual([bob]);
    expect(ids(await q('externalId eq "EXT-BOB"'))).toEqual([]);
    expect(ids(await q(`id eq "${bob}"`))).toEqual([bob]);
    expect(ids(await q('emails[type eq "work"].value eq "bob@example.com"'))).toEqual([bob]);
    expect(ids(await q('emails[type eq "work"].value eq "alice@home.test"'))).toEqual([]);
    expect(ids(await q('emails.value eq "alice@home.test"'))).toEqual([alice]);
    expect(ids(await q('displayName eq "Bob B"'))).toEqual([bob]);
    expect(ids(await q('userName sw "bob" or userName co "lice"')).sort()).toEqual([alice, bob].sort());
    expect(ids(await q('userName ew "example.com" and active eq false'))).toEqual([bob]);
    expect(ids(await q(`${ENTERPRISE}:department eq "sales"`))).toEqual([alice]);
    expect(ids(await q('title pr'))).toEqual([]);
    expect(ids(await q('externalId pr')).sort()).toEqual([alice, bob].sort());
    expect(ids(await q('not (userName eq "bob@example.com")'))).toEqual([alice]);
    expect(ids(await q('meta.lastModified gt "2000-01-01T00:00:00Z"')).sort()).toEqual([alice, bob].sort());
    expect(ids(await q('meta.created lt "2000-01-01T00:00:00Z"'))).toEqual([]);
    const counted = await q('userName eq "alice@example.com"');
    expect(counted.body).toMatchObject({ totalResults: 1, itemsPerPage: 1, startIndex: 1 });
  });

  it('refuses filters it cannot read or does not support with 400 invalidFilter', async () => {
    const { d } = await seeded();
    for (const filter of ['userName eq', 'userName zz "a"', 'password eq "x"', 'meta.created gt "not a date"', '(((']) {
      const res = await d.scim.get(`${d.base}/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.status, filter).toBe(400);
      expect(res.body, filter).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidFilter' });
    }
  });

  it('attributes and excludedAttributes project the resources', async () => {
    const { d, alice } = await seeded();
    const only = await d.scim.get(`${d.base}/Users/${alice}?attributes=userName,name.givenName`);
    expect(Object.keys(only.body).sort()).toEqual(['id', 'meta', 'name', 'schemas', 'userName']);
    expect(only.body.name).toEqual({ givenName: 'Ada' });
    const without = await d.scim.get(`${d.base}/Users?excludedAttributes=emails,name`);
    for (const r of without.body.Resources) {
      expect(r.emails).toBeUndefined();
      expect(r.name).toBeUndefined();
      expect(r.userName).toBeDefined();
    }
  });

  it('an unsupported sortBy, bad startIndex or count is 400 invalidValue (sorting: sort.http.test.ts)', async () => {
    const { d } = await seeded();
    expect((await d.scim.get(`${d.base}/Users?sortBy=nickName`)).status).toBe(400);
    const bad = await d.scim.get(`${d.base}/Users?count=ten`);
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe('invalidValue');
    const clamped = await d.scim.get(`${d.base}/Users?startIndex=-4&count=1000`);
    expect(clamped.body).toMatchObject({ startIndex: 1, totalResults: 2 });
  });
});

describe('SCIM PATCH paths that name object machinery', () => {
  it.each([
    [{ op: 'add', path: '__proto__.polluted', value: 'yes' }],
    [{ op: 'add', path: 'constructor.prototype.polluted', value: 'yes' }],
    [{ op: 'add', value: { '__proto__.polluted': 'yes' } }],
    [{ op: 'replace', value: { 'name.constructor.prototype.polluted': 'yes' } }],
  ])('%j is 400 invalidPath and pollutes nothing', async (operation) => {
    const d = await newDirectory();
    const created = await d.scim.post(`${d.base}/Users`, scimUser());
    const res = await d.scim.patch(`${d.base}/Users/${created.body.id}`, { Operations: [operation] });
    expect(res.status).toBe(400);
    expect(res.body.scimType).toBe('invalidPath');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const [row] = await storedUsers(d);
    expect(row.version).toBe(1);
  });
});
