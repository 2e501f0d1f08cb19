import { directoryGroupMembers, directoryGroups, directoryUsers, newId } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { getWorld } from '../helpers/world.ts';
import {
  ERROR_SCHEMA,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  newDirectory,
  PATCH_OP,
  scimUser,
  type TestDirectory,
} from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

async function members(d: TestDirectory, groupId: string): Promise<string[]> {
  const rows = await d.env.deps.db
    .select({ id: directoryGroupMembers.directoryUserId })
    .from(directoryGroupMembers)
    .where(eq(directoryGroupMembers.groupId, groupId));
  return rows.map((r: { id: string }) => r.id).sort();
}

async function users(d: TestDirectory, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await d.scim.post(`${d.base}/Users`, scimUser())).body.id);
  return ids;
}

const patch = (Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations });

describe('SCIM /Groups', () => {
  it('POST creates a group with members; GET shows them; list and filter by displayName', async () => {
    const d = await newDirectory();
    const [u1, u2] = await users(d, 2);
    const res = await d.scim.post(`${d.base}/Groups`, {
      schemas: [GROUP_SCHEMA],
      displayName: 'Engineering',
      externalId: 'grp-eng',
      members: [{ value: u1 }, { value: u2 }],
    });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^directory_group_[0-9A-Z]{26}$/);
    expect(res.headers.get('location')).toBe(`${d.baseUrl}/Groups/${res.body.id}`);
    expect(res.body).toMatchObject({ schemas: [GROUP_SCHEMA], displayName: 'Engineering', externalId: 'grp-eng' });
    expect(res.body.members.map((m: { value: string }) => m.value).sort()).toEqual([u1, u2].sort());
    expect(res.body.members[0].$ref).toMatch(`${d.baseUrl}/Users/`);
    expect(res.body.meta).toMatchObject({ resourceType: 'Group', version: 'W/"1"' });
    expect(await members(d, res.body.id)).toEqual([u1, u2].sort());

    const got = await d.scim.get(`${d.base}/Groups/${res.body.id}`);
    expect(got.body).toEqual(res.body);
    const list = await d.scim.get(`${d.base}/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}`);
    expect(list.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(list.body.Resources[0].id).toBe(res.body.id);
    const lean = await d.scim.get(`${d.base}/Groups?excludedAttributes=members`);
    expect(lean.body.Resources[0].members).toBeUndefined();
    const byMember = await d.scim.get(`${d.base}/Groups?filter=${encodeURIComponent(`members.value eq "${u1}"`)}`);
    expect(byMember.body.totalResults).toBe(1);
  });

  it('a member that is not a user of the directory is 400 invalidValue, nothing stored', async () => {
    const d = await newDirectory();
    const other = await newDirectory({ env: d.env });
    const [foreign] = await users(other, 1);
    const res = await d.scim.post(`${d.base}/Groups`, { displayName: 'X', members: [{ value: foreign }] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidValue' });
    const stored = await d.env.deps.db
      .select()
      .from(directoryGroups)
      .where(eq(directoryGroups.directoryId, d.directoryId));
    expect(stored).toHaveLength(0);
  });

  it('PATCH members: add as an array, remove by filter, Entra remove with value, remove all, replace', async () => {
    const d = await newDirectory();
    const [u1, u2, u3, u4] = await users(d, 4);
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G' })).body.id;
    const url = `${d.base}/Groups/${g}`;
    const added = await d.scim.patch(
      url,
      patch([{ op: 'Add', path: 'members', value: [{ value: u1 }, { value: u2 }, { value: u3 }] }]),
    );
    expect(added.status).toBe(204);
    expect(added.headers.get('etag')).toBe('W/"2"');
    expect(await members(d, g)).toEqual([u1, u2, u3].sort());
    await d.scim.patch(url, patch([{ op: 'remove', path: `members[value eq "${u2}"]` }]));
    expect(await members(d, g)).toEqual([u1, u3].sort());
    await d.scim.patch(url, patch([{ op: 'Remove', path: 'members', value: [{ value: u3 }] }]));
    expect(await members(d, g)).toEqual([u1]);
    await d.scim.patch(url, patch([{ op: 'remove', path: 'members' }]));
    expect(await members(d, g)).toEqual([]);
    await d.scim.patch(url, patch([{ op: 'replace', path: 'members', value: [{ value: u4 }, { value: u2 }] }]));
    expect(await members(d, g)).toEqual([u2, u4].sort());
    const renamed = await d.scim.patch(
      url,
      patch([
        { op: 'replace', value: { id: g, displayName: 'Renamed' } },
        { op: 'add', path: 'members', value: [{ value: u1 }] },
      ]),
    );
    expect(renamed.status).toBe(204);
    const got = await d.scim.get(url);
    expect(got.body.displayName).toBe('Renamed');
    expect(got.body.members.map((m: { value: string }) => m.value).sort()).toEqual([u1, u2, u4].sort());
  });

  it('PUT with the whole members list replaces the membership (Okta); without members keeps it', async () => {
    const d = await newDirectory();
    const [u1, u2, u3] = await users(d, 3);
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G', members: [{ value: u1 }, { value: u2 }] }))
      .body.id;
    const put = await d.scim.put(`${d.base}/Groups/${g}`, {
      schemas: [GROUP_SCHEMA],
      id: g,
      displayName: 'G2',
      members: [{ value: u2 }, { value: u3 }],
    });
    expect(put.status).toBe(200);
    expect(put.body.displayName).toBe('G2');
    expect(await members(d, g)).toEqual([u2, u3].sort());
    await d.scim.put(`${d.base}/Groups/${g}`, { displayName: 'G3' });
    expect(await members(d, g)).toEqual([u2, u3].sort());
  });

  it('a PATCH adding 1,000 members is one set-based change', async () => {
    const d = await newDirectory();
    const db = d.env.deps.db;
    const now = new Date();
    const ids = Array.from({ length: 1000 }, () => newId('directoryUser'));
    await db.insert(directoryUsers).values(
      ids.map((id, i) => ({
        id,
        environmentId: d.env.environmentId,
        directoryId: d.directoryId,
        organizationId: d.organizationId,
        userName: `bulk${i}@example.com`,
        createdAt: now,
        updatedAt: now,
      })),
    );
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'Everyone' })).body.id;
    const res = await d.scim.patch(
      `${d.base}/Groups/${g}`,
      patch([{ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }]),
    );
    expect(res.status).toBe(204);
    expect(await members(d, g)).toHaveLength(1000);
    const removed = await d.scim.patch(
      `${d.base}/Groups/${g}`,
      patch([{ op: 'remove', path: 'members', value: ids.slice(0, 500).map((value) => ({ value })) }]),
    );
    expect(removed.status).toBe(204);
    expect(await members(d, g)).toHaveLength(500);
  });

  it('bad PATCH bodies are refused with SCIM errors and change nothing', async () => {
    const d = await newDirectory();
    const [u1] = await users(d, 1);
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G', members: [{ value: u1 }] })).body.id;
    const url = `${d.base}/Groups/${g}`;
    const cases: Array<[unknown, string]> = [
      [{ Operations: [] }, 'invalidSyntax'],
      [{ Operations: [{ op: 'move', path: 'members' }] }, 'invalidSyntax'],
      [{ Operations: [{ op: 'add', path: 'members[value eq "x"]', value: [] }] }, 'invalidPath'],
      [{ Operations: [{ op: 'add', path: 'members', value: [{ nope: 1 }] }] }, 'invalidValue'],
      [{ Operations: [{ op: 'replace', path: 'displayName', value: '' }] }, 'invalidValue'],
      [{ Operations: [{ op: 'remove' }] }, 'invalidPath'],
    ];
    for (const [body, scimType] of cases) {
      const res = await d.scim.patch(url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.scimType, JSON.stringify(body)).toBe(scimType);
    }
    const got = await d.scim.get(url);
    expect(got.body).toMatchObject({ displayName: 'G', meta: { version: 'W/"1"' } });
    expect(await members(d, g)).toEqual([u1]);
  });

  it('DELETE removes the group and its memberships, not its users', async () => {
    const d = await newDirectory();
    const [u1] = await users(d, 1);
    const g = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G', members: [{ value: u1 }] })).body.id;
    expect((await d.scim.delete(`${d.base}/Groups/${g}`)).status).toBe(204);
    expect((await d.scim.get(`${d.base}/Groups/${g}`)).status).toBe(404);
    expect(await members(d, g)).toEqual([]);
    expect((await d.scim.get(`${d.base}/Users/${u1}`)).status).toBe(200);
  });
});

// The ETag behaviour ServiceProviderConfig declares (`etag.supported`), and the list parameters,
// for Groups as for Users (users.http.test.ts): a stale `If-Match` changes nothing and records nothing.
describe('SCIM /Groups versions and lists', () => {
  it('ETag and meta.version count writes; If-None-Match answers 304; a stale If-Match is 412 for PATCH, PUT and DELETE', async () => {
    const d = await newDirectory();
    const [u1, u2] = await users(d, 2);
    const created = await d.scim.post(`${d.base}/Groups`, { displayName: 'G', members: [{ value: u1 }] });
    expect(created.headers.get('etag')).toBe('W/"1"');
    const url = `${d.base}/Groups/${created.body.id}`;
    expect((await d.scim.get(url, { 'If-None-Match': 'W/"1"' })).status).toBe(304);

    const added = await d.scim.patch(url, patch([{ op: 'add', path: 'members', value: [{ value: u2 }] }]), {
      'If-Match': 'W/"1"',
    });
    expect(added.status, added.text).toBe(204);
    expect(added.headers.get('etag')).toBe('W/"2"');
    const got = await d.scim.get(url, { 'If-None-Match': 'W/"1"' });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('W/"2"');
    expect(got.body.meta.version).toBe('W/"2"');

    const events = (await storedEvents(d.env)).length;
    const stale = { 'If-Match': 'W/"1"' };
    const refused = [
      await d.scim.patch(url, patch([{ op: 'remove', path: 'members', value: [{ value: u1 }] }]), stale),
      await d.scim.put(url, { displayName: 'Renamed', members: [] }, stale),
      await d.scim.delete(url, stale),
    ];
    for (const res of refused) {
      expect(res.status, res.text).toBe(412);
      expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '412' });
    }
    const [row] = await d.env.deps.db.select().from(directoryGroups).where(eq(directoryGroups.id, created.body.id));
    expect(row).toMatchObject({ displayName: 'G', version: 2 });
    expect(await members(d, created.body.id)).toEqual([u1, u2].sort());
    expect((await storedEvents(d.env)).length).toBe(events);

    const renamed = await d.scim.put(
      url,
      { displayName: 'Renamed', members: [{ value: u1 }] },
      { 'If-Match': 'W/"2"' },
    );
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.meta.version).toBe('W/"3"');
    expect(await members(d, created.body.id)).toEqual([u1]);
    expect((await d.scim.delete(url, { 'If-Match': 'W/"3"' })).status).toBe(204);
    expect(await d.env.deps.db.select().from(directoryGroups).where(eq(directoryGroups.id, created.body.id))).toEqual(
      [],
    );
  });

  it('startIndex and count page the groups; attributes keeps only what it names (and id, schemas, meta), members.value of each member', async () => {
    const d = await newDirectory();
    const [u1] = await users(d, 1);
    for (const name of ['A', 'B', 'C', 'D', 'E']) {
      expect((await d.scim.post(`${d.base}/Groups`, { displayName: name, members: [{ value: u1 }] })).status).toBe(201);
    }
    const all = await d.scim.get(`${d.base}/Groups`);
    expect(all.body).toMatchObject({ totalResults: 5, startIndex: 1, itemsPerPage: 5 });
    const order = all.body.Resources.map((r: { id: string }) => r.id);
    const page = await d.scim.get(`${d.base}/Groups?startIndex=2&count=2`);
    expect(page.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((r: { id: string }) => r.id)).toEqual(order.slice(1, 3));
    const last = await d.scim.get(`${d.base}/Groups?startIndex=5&count=2`);
    expect(last.body.Resources.map((r: { id: string }) => r.id)).toEqual(order.slice(4));
    const past = await d.scim.get(`${d.base}/Groups?startIndex=9`);
    expect(past.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    const none = await d.scim.get(`${d.base}/Groups?count=0`);
    expect(none.body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });

    const named = await d.scim.get(`${d.base}/Groups?attributes=displayName&count=1`);
    expect(Object.keys(named.body.Resources[0]).sort()).toEqual(['displayName', 'id', 'meta', 'schemas']);
    const one = await d.scim.get(`${d.base}/Groups/${order[0]}?attributes=members.value`);
    expect(Object.keys(one.body).sort()).toEqual(['id', 'members', 'meta', 'schemas']);
    expect(one.body.members).toEqual([{ value: u1 }]);
    const lean = await d.scim.get(`${d.base}/Groups/${order[0]}?excludedAttributes=members.display,members.$ref`);
    expect(lean.body.members).toEqual([{ value: u1 }]);
    expect(lean.body.displayName).toBe('A');
    const excluded = await d.scim.get(`${d.base}/Groups/${order[0]}?excludedAttributes=members,displayName`);
    expect(excluded.body.members).toBeUndefined();
    expect(excluded.body.displayName).toBeUndefined();
    expect(excluded.body.id).toBe(order[0]);
  });
});
