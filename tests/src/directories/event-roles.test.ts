// dsync.user.* events (and dsync.group.user_added / user_removed's `user`) carry upstream's
// DirectoryUser `role` and `roles` when groups of the directory that map to roles hold the user,
// and neither key (never null) when none do; GET /directory_users/:id shows the same.
import {
  createDirectoryGroup,
  createDirectoryUser,
  deleteDirectoryUser,
  replaceDirectoryUser,
  setDirectoryGroupRole,
  writeDirectoryGroup,
} from '@atrium/routers';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld } from '../helpers/world.ts';
import { type DirectoryWorld, directoryWorld, eventsOf, groupFields, userFields } from './provisioning-world.ts';

beforeAll(() => getWorld());

/** The data of the events named `name` stored after the first `after`. */
async function dataOf(w: DirectoryWorld, after: number, name: string) {
  return (await eventsOf(w))
    .slice(after)
    .filter((e) => e.event === name)
    .map((e) => e.data as Record<string, any>);
}

describe('directory user events carry the roles of mapped groups', () => {
  it('absent without a mapped group; role (first by slug) and roles once groups map; as the REST read shows', async () => {
    const w = await directoryWorld();
    await w.env.caller.roles.create({ slug: 'viewer', name: 'Viewer' });
    let before = (await eventsOf(w)).length;
    const fields = userFields();
    const a = await createDirectoryUser(w.scope, w.directory, fields);
    const [created] = await dataOf(w, before, 'dsync.user.created');
    expect(created).toMatchObject({ id: a.id, object: 'directory_user' });
    expect(created).not.toHaveProperty('role');
    expect(created).not.toHaveProperty('roles');

    const viewers = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Viewers'), []);
    const admins = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), []);
    await setDirectoryGroupRole(w.scope, viewers.id, 'viewer');
    await setDirectoryGroupRole(w.scope, admins.id, 'admin');

    before = (await eventsOf(w)).length;
    await writeDirectoryGroup(w.scope, await w.fresh(), viewers.id, undefined, { add: [a.id], remove: [] });
    await writeDirectoryGroup(w.scope, await w.fresh(), admins.id, undefined, { add: [a.id], remove: [] });
    const added = await dataOf(w, before, 'dsync.group.user_added');
    expect(added.map((d) => [d.user.role, d.user.roles])).toEqual([
      [{ slug: 'viewer' }, [{ slug: 'viewer' }]],
      [{ slug: 'admin' }, [{ slug: 'admin' }, { slug: 'viewer' }]],
    ]);

    before = (await eventsOf(w)).length;
    await replaceDirectoryUser(w.scope, await w.fresh(), a.id, {
      ...fields,
      attributes: { ...fields.attributes, title: 'Engineer' },
    });
    const [updated] = await dataOf(w, before, 'dsync.user.updated');
    expect(updated).toMatchObject({
      role: { slug: 'admin' },
      roles: [{ slug: 'admin' }, { slug: 'viewer' }],
      previous_attributes: { title: null },
    });
    const read = await w.env.http.get(`/directory_users/${a.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ role: { slug: 'admin' }, roles: [{ slug: 'admin' }, { slug: 'viewer' }] });

    // Removed from both: the removal's user carries what it is left with, then nothing.
    before = (await eventsOf(w)).length;
    await writeDirectoryGroup(w.scope, await w.fresh(), admins.id, undefined, { add: [], remove: [a.id] });
    await writeDirectoryGroup(w.scope, await w.fresh(), viewers.id, undefined, { add: [], remove: [a.id] });
    const removed = await dataOf(w, before, 'dsync.group.user_removed');
    expect(removed[0]?.user).toMatchObject({ role: { slug: 'viewer' }, roles: [{ slug: 'viewer' }] });
    expect(removed[1]?.user).not.toHaveProperty('role');
    expect(removed[1]?.user).not.toHaveProperty('roles');
    const bare = await w.env.http.get(`/directory_users/${a.id}`);
    expect(bare.body).not.toHaveProperty('role');
    expect(bare.body).not.toHaveProperty('roles');
  });

  it('dsync.user.deleted carries the roles the user had; a group without a mapping adds none', async () => {
    const w = await directoryWorld();
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const plain = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Plain'), [a.id]);
    const admins = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), [a.id]);
    await setDirectoryGroupRole(w.scope, admins.id, 'admin');
    expect(plain.roleId).toBeNull();
    const before = (await eventsOf(w)).length;
    await deleteDirectoryUser(w.scope, await w.fresh(), a.id);
    const [deleted] = await dataOf(w, before, 'dsync.user.deleted');
    expect(deleted).toMatchObject({ id: a.id, role: { slug: 'admin' }, roles: [{ slug: 'admin' }] });
  });
});
