// SCIM `sortBy` / `sortOrder` (RFC 7644 section 3.4.2.3) on userName, displayName and meta.created,
// through pages (`startIndex`, `count`) and with a filter; anything else is 400 invalidValue.
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { ERROR_SCHEMA, newDirectory, scimUser } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

const names = (
  res: { body: { Resources: Array<{ userName?: string; displayName?: string }> } },
  key: 'userName' | 'displayName',
) => res.body.Resources.map((r) => r[key]);

describe('SCIM lists sort', () => {
  it('users by userName (any case, case-insensitively), both orders, across pages', async () => {
    const d = await newDirectory();
    const created: string[] = [];
    for (const name of ['carol', 'Alice', 'bob', 'dave']) {
      const userName = `${name}@sort.example.com`;
      const res = await d.scim.post(
        `${d.base}/Users`,
        scimUser({ userName, emails: [{ value: userName, primary: true }] }),
      );
      expect(res.status).toBe(201);
      created.push(userName);
    }
    const asc = await d.scim.get(`${d.base}/Users?sortBy=userName`);
    expect(asc.status).toBe(200);
    expect(names(asc, 'userName')).toEqual([
      'Alice@sort.example.com',
      'bob@sort.example.com',
      'carol@sort.example.com',
      'dave@sort.example.com',
    ]);
    const desc = await d.scim.get(`${d.base}/Users?sortby=USERNAME&sortOrder=Descending`);
    expect(names(desc, 'userName')).toEqual([
      'dave@sort.example.com',
      'carol@sort.example.com',
      'bob@sort.example.com',
      'Alice@sort.example.com',
    ]);
    const second = await d.scim.get(`${d.base}/Users?sortBy=userName&startIndex=3&count=2`);
    expect(second.body).toMatchObject({ totalResults: 4, startIndex: 3, itemsPerPage: 2 });
    expect(names(second, 'userName')).toEqual(['carol@sort.example.com', 'dave@sort.example.com']);
    const filtered = await d.scim.get(
      `${d.base}/Users?sortBy=userName&sortOrder=descending&filter=${encodeURIComponent('userName sw "b" or userName sw "c"')}`,
    );
    expect(names(filtered, 'userName')).toEqual(['carol@sort.example.com', 'bob@sort.example.com']);
    // meta.created: creation order, and its reverse.
    const byCreated = await d.scim.get(`${d.base}/Users?sortBy=meta.created&sortOrder=descending`);
    expect(names(byCreated, 'userName')).toEqual([...created].reverse());
  });

  it('users by displayName (those without one last ascending), groups by displayName and meta.created', async () => {
    const d = await newDirectory();
    await d.scim.post(`${d.base}/Users`, scimUser({ displayName: 'zed' }));
    await d.scim.post(`${d.base}/Users`, scimUser({ displayName: undefined }));
    await d.scim.post(`${d.base}/Users`, scimUser({ displayName: 'Amy' }));
    const users = await d.scim.get(`${d.base}/Users?sortBy=displayName`);
    expect(names(users, 'displayName')).toEqual(['Amy', 'zed', undefined]);

    for (const name of ['beta', 'Alpha', 'gamma']) {
      expect((await d.scim.post(`${d.base}/Groups`, { displayName: name })).status).toBe(201);
    }
    expect(names(await d.scim.get(`${d.base}/Groups?sortBy=displayName`), 'displayName')).toEqual([
      'Alpha',
      'beta',
      'gamma',
    ]);
    expect(names(await d.scim.get(`${d.base}/Groups?sortBy=meta.created&sortOrder=descending`), 'displayName')).toEqual(
      ['gamma', 'Alpha', 'beta'],
    );
  });

  it.each([
    ['an attribute that is not sortable', 'Users?sortBy=title'],
    ['userName on groups', 'Groups?sortBy=userName'],
    ['an unknown sortOrder', 'Users?sortBy=userName&sortOrder=up'],
  ])('%s is 400 invalidValue', async (_, path) => {
    const d = await newDirectory();
    const res = await d.scim.get(`${d.base}/${path}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400', scimType: 'invalidValue' });
  });
});
