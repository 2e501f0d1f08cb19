// A User's read-only `groups` (RFC 7643 section 4.1.2): `value`, `$ref`, `display` of each group
// of the directory the user is a member of; absent when none; `attributes` / `excludedAttributes`
// honoured; what a client sends as `groups` is ignored; the Schemas resource says the same.
import { directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { newDirectory, scimUser, USER_SCHEMA } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

describe('the User resource has read-only groups', () => {
  it('lists the groups of the user (value, $ref, display), absent for a user in none', async () => {
    const d = await newDirectory();
    const ada = (await d.scim.post(`${d.base}/Users`, scimUser())).body;
    const bob = (await d.scim.post(`${d.base}/Users`, scimUser())).body;
    expect(ada).not.toHaveProperty('groups');
    const eng = (await d.scim.post(`${d.base}/Groups`, { displayName: 'Engineering', members: [{ value: ada.id }] }))
      .body;
    const ops = (await d.scim.post(`${d.base}/Groups`, { displayName: 'Ops', members: [{ value: ada.id }] })).body;
    const wanted = [eng, ops]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((g) => ({ value: g.id, $ref: `${d.baseUrl}/Groups/${g.id}`, display: g.displayName }));

    const got = await d.scim.get(`${d.base}/Users/${ada.id}`);
    expect(got.status).toBe(200);
    expect(got.body.groups).toEqual(wanted);
    expect((await d.scim.get(`${d.base}/Users/${bob.id}`)).body).not.toHaveProperty('groups');

    const list = await d.scim.get(`${d.base}/Users?filter=${encodeURIComponent(`userName eq "${ada.userName}"`)}`);
    expect(list.body.Resources[0].groups).toEqual(wanted);

    // A PUT and a PATCH answer the resource with its groups too.
    const put = await d.scim.put(`${d.base}/Users/${ada.id}`, { ...ada, title: 'Engineer' });
    expect(put.status).toBe(200);
    expect(put.body.groups).toEqual(wanted);
  });

  it('honours attributes and excludedAttributes', async () => {
    const d = await newDirectory();
    const ada = (await d.scim.post(`${d.base}/Users`, scimUser())).body;
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G', members: [{ value: ada.id }] })).body;
    const only = await d.scim.get(`${d.base}/Users/${ada.id}?attributes=groups`);
    expect(Object.keys(only.body).sort()).toEqual(['groups', 'id', 'meta', 'schemas']);
    expect(only.body.groups).toEqual([{ value: g.id, $ref: `${d.baseUrl}/Groups/${g.id}`, display: 'G' }]);
    const without = await d.scim.get(`${d.base}/Users/${ada.id}?excludedAttributes=groups`);
    expect(without.body).not.toHaveProperty('groups');
    expect(without.body.userName).toBe(ada.userName);
    const names = await d.scim.get(`${d.base}/Users?attributes=userName`);
    expect(names.body.Resources[0]).not.toHaveProperty('groups');
    const listed = await d.scim.get(`${d.base}/Users?excludedAttributes=GROUPS`);
    expect(listed.body.Resources[0]).not.toHaveProperty('groups');
  });

  it('ignores groups a client sends (readOnly): neither stored nor answered', async () => {
    const d = await newDirectory();
    const res = await d.scim.post(
      `${d.base}/Users`,
      scimUser({ groups: [{ value: 'directory_group_01FAKE', display: 'Admins' }] }),
    );
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('groups');
    const [row] = await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.id, res.body.id));
    expect(row?.attributes).not.toHaveProperty('groups');
    expect((await d.scim.get(`${d.base}/Users/${res.body.id}`)).body).not.toHaveProperty('groups');
  });

  it('the User schema declares groups read-only with value, $ref and display', async () => {
    const d = await newDirectory();
    const schema = await d.scim.get(`${d.base}/Schemas/${USER_SCHEMA}`);
    expect(schema.status).toBe(200);
    const groups = schema.body.attributes.find((a: { name: string }) => a.name === 'groups');
    expect(groups).toMatchObject({ type: 'complex', multiValued: true, mutability: 'readOnly' });
    expect(groups.subAttributes.map((a: { name: string; mutability: string }) => [a.name, a.mutability])).toEqual([
      ['value', 'readOnly'],
      ['$ref', 'readOnly'],
      ['display', 'readOnly'],
    ]);
  });
});
