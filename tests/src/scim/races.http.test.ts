import { directoryGroupMembers, directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { newDirectory, PATCH_OP, scimUser } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

describe('SCIM under concurrent writes', () => {
  it('the same userName POSTed at once: one 201, the others 409 uniqueness, one row', async () => {
    const d = await newDirectory();
    const body = scimUser();
    const answers = await Promise.all(Array.from({ length: 6 }, () => d.scim.post(`${d.base}/Users`, body)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((a) => a.status === 409)) expect(r.body.scimType).toBe('uniqueness');
    const rows = await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId));
    expect(rows).toHaveLength(1);
  });

  it('PATCHes of one user and of one group at once all apply (no lost update)', async () => {
    const d = await newDirectory();
    const user = (await d.scim.post(`${d.base}/Users`, scimUser())).body.id;
    const titles = ['a', 'b', 'c', 'd'];
    const patched = await Promise.all(
      titles.map((t, i) =>
        d.scim.patch(`${d.base}/Users/${user}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'add', path: `nickName${i}`, value: t }],
        }),
      ),
    );
    expect(patched.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const got = await d.scim.get(`${d.base}/Users/${user}`);
    for (let i = 0; i < titles.length; i++) expect(got.body[`nickName${i}`]).toBe(titles[i]);
    expect(got.body.meta.version).toBe('W/"5"');

    const members: string[] = [];
    for (let i = 0; i < 6; i++) members.push((await d.scim.post(`${d.base}/Users`, scimUser())).body.id);
    const group = (await d.scim.post(`${d.base}/Groups`, { displayName: 'G' })).body.id;
    const added = await Promise.all(
      members.map((value) =>
        d.scim.patch(`${d.base}/Groups/${group}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'add', path: 'members', value: [{ value }] }],
        }),
      ),
    );
    expect(added.map((r) => r.status)).toEqual(members.map(() => 204));
    const rows = await d.env.deps.db
      .select()
      .from(directoryGroupMembers)
      .where(eq(directoryGroupMembers.groupId, group));
    expect(rows).toHaveLength(6);
  });
});
