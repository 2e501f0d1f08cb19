import {
  createDirectoryGroup,
  createDirectoryUser,
  deleteDirectoryGroup,
  replaceDirectoryUser,
  setDirectoryGroupRole,
  writeDirectoryGroup,
} from '@atrium/routers';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, newEnvironment } from '../helpers/world.ts';
import {
  type DirectoryWorld,
  directoryWorld,
  eventNamesAfter,
  eventsOf,
  groupFields,
  groupRows,
  membershipOfUser,
  refusal,
  userFields,
} from './provisioning-world.ts';

async function slugsOf(w: DirectoryWorld, userId: string | null) {
  return (await membershipOfUser(w, userId as string))?.roles.map((r) => r.slug);
}

async function updatesAfter(w: DirectoryWorld, before: number) {
  return (await eventNamesAfter(w, before)).filter((n) => n === 'organization_membership.updated').length;
}

// The worker's database is built here, within the hook's time, not the first test's.
beforeAll(() => getWorld());

describe('directory groups mapped to roles give directory-managed memberships their roles', () => {
  it("members get all their mapped groups' roles (by slug), the last mapped group gone falls back to the default role", async () => {
    const w = await directoryWorld();
    await w.env.caller.roles.create({ slug: 'viewer', name: 'Viewer' });
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const b = await createDirectoryUser(w.scope, await w.fresh(), userFields());
    const admins = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), []);
    const viewers = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Viewers'), []);

    let before = (await eventsOf(w)).length;
    expect(await setDirectoryGroupRole(w.scope, admins.id, 'admin')).toMatchObject({
      group: { id: admins.id, object: 'directory_group' },
      role: { slug: 'admin' },
    });
    expect(await updatesAfter(w, before)).toBe(0);

    before = (await eventsOf(w)).length;
    await writeDirectoryGroup(w.scope, await w.fresh(), admins.id, undefined, { add: [a.id], remove: [] });
    expect(await slugsOf(w, a.userId)).toEqual(['admin']);
    expect(await slugsOf(w, b.userId)).toEqual(['member']);
    expect(await updatesAfter(w, before)).toBe(1);
    expect(await membershipOfUser(w, a.userId as string)).toMatchObject({ role: { slug: 'admin' } });

    // An unmapped group changes no role.
    before = (await eventsOf(w)).length;
    await writeDirectoryGroup(w.scope, await w.fresh(), viewers.id, undefined, { add: [a.id, b.id], remove: [] });
    expect(await updatesAfter(w, before)).toBe(0);

    before = (await eventsOf(w)).length;
    await setDirectoryGroupRole(w.scope, viewers.id, 'viewer');
    expect(await slugsOf(w, a.userId)).toEqual(['admin', 'viewer']);
    expect(await slugsOf(w, b.userId)).toEqual(['viewer']);
    expect(await updatesAfter(w, before)).toBe(2);
    // The same mapping again: nothing changes, nothing is said.
    before = (await eventsOf(w)).length;
    await setDirectoryGroupRole(w.scope, viewers.id, 'viewer');
    expect(await eventNamesAfter(w, before)).toEqual([]);

    await writeDirectoryGroup(w.scope, await w.fresh(), admins.id, undefined, { add: [], remove: [a.id] });
    expect(await slugsOf(w, a.userId)).toEqual(['viewer']);

    before = (await eventsOf(w)).length;
    await setDirectoryGroupRole(w.scope, viewers.id, null);
    expect(await slugsOf(w, a.userId)).toEqual(['member']);
    expect(await slugsOf(w, b.userId)).toEqual(['member']);
    expect(await updatesAfter(w, before)).toBe(2);
  });

  it('deleting a mapped group, or replacing its members, recomputes the roles', async () => {
    const w = await directoryWorld();
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const b = await createDirectoryUser(w.scope, await w.fresh(), userFields());
    const admins = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), [a.id]);
    await setDirectoryGroupRole(w.scope, admins.id, 'admin');
    expect(await slugsOf(w, a.userId)).toEqual(['admin']);

    await writeDirectoryGroup(w.scope, await w.fresh(), admins.id, groupFields('Admins'), { replace: [b.id] });
    expect(await slugsOf(w, a.userId)).toEqual(['member']);
    expect(await slugsOf(w, b.userId)).toEqual(['admin']);

    await deleteDirectoryGroup(w.scope, await w.fresh(), admins.id);
    expect(await slugsOf(w, b.userId)).toEqual(['member']);
  });

  it('a reactivated user gets its mapped roles; a deactivated one keeps them while inactive', async () => {
    const w = await directoryWorld();
    const fields = userFields();
    const a = await createDirectoryUser(w.scope, w.directory, fields);
    const admins = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), [a.id]);
    await setDirectoryGroupRole(w.scope, admins.id, 'admin');
    await replaceDirectoryUser(w.scope, await w.fresh(), a.id, { ...fields, active: false });
    expect(await membershipOfUser(w, a.userId as string)).toMatchObject({
      status: 'inactive',
      roles: [{ slug: 'admin' }],
    });
    // Meanwhile an operator changes the member's roles; reactivation restores the mapping's.
    const m = await membershipOfUser(w, a.userId as string);
    await w.env.caller.organizationMemberships.update({ id: m?.id as string, role_slug: 'member' });
    await replaceDirectoryUser(w.scope, await w.fresh(), a.id, fields);
    expect(await membershipOfUser(w, a.userId as string)).toMatchObject({
      status: 'active',
      roles: [{ slug: 'admin' }],
    });
  });

  it("maps to the organization's own role over an environment role of the same slug", async () => {
    const w = await directoryWorld();
    await w.env.caller.roles.organization.create({
      organization_id: w.organizationId,
      slug: 'admin',
      name: 'Org admin',
    });
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const group = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), [a.id]);
    await setDirectoryGroupRole(w.scope, group.id, 'admin');
    const [row] = await groupRows(w);
    const roles = await w.env.caller.roles.organization.list({ organization_id: w.organizationId });
    const own = roles.data.find((r) => r.slug === 'admin' && r.type === 'OrganizationRole');
    expect(row?.roleId).toBe(own?.id);
  });

  it('refuses an unknown role (422) or group (404, also one of another environment) and stores nothing', async () => {
    const w = await directoryWorld();
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const group = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Admins'), [a.id]);
    const before = await eventsOf(w);
    expect(await refusal(setDirectoryGroupRole(w.scope, group.id, 'no-such-role'))).toEqual({
      status: 422,
      code: 'invalid_request_parameters',
    });
    expect(
      await refusal(setDirectoryGroupRole(w.scope, 'directory_group_01HZZZZZZZZZZZZZZZZZZZZZZZ', 'admin')),
    ).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
    const stranger = await directoryWorld(await newEnvironment());
    expect(await refusal(setDirectoryGroupRole(stranger.scope, group.id, 'admin'))).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
    expect((await groupRows(w))[0]?.roleId).toBeNull();
    expect(await eventsOf(w)).toEqual(before);
  });

  it('concurrent PATCHes adding one user to two mapped groups give it both roles', async () => {
    const w = await directoryWorld();
    await w.env.caller.roles.create({ slug: 'viewer', name: 'Viewer' });
    const a = await createDirectoryUser(w.scope, w.directory, userFields());
    const g1 = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('One'), []);
    const g2 = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Two'), []);
    await setDirectoryGroupRole(w.scope, g1.id, 'admin');
    await setDirectoryGroupRole(w.scope, g2.id, 'viewer');
    const dir = await w.fresh();
    await Promise.all([
      writeDirectoryGroup(w.scope, dir, g1.id, undefined, { add: [a.id], remove: [] }),
      writeDirectoryGroup(w.scope, dir, g2.id, undefined, { add: [a.id], remove: [] }),
    ]);
    expect(await slugsOf(w, a.userId)).toEqual(['admin', 'viewer']);
  });

  it('one PATCH adding 100 members to a mapped group: every role set, one event per member and per membership', async () => {
    const w = await directoryWorld();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await createDirectoryUser(w.scope, await w.fresh(), userFields())).id);
    const group = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Everyone'), []);
    await setDirectoryGroupRole(w.scope, group.id, 'admin');
    const before = (await eventsOf(w)).length;
    await writeDirectoryGroup(w.scope, await w.fresh(), group.id, undefined, { add: ids, remove: [] });
    const names = await eventNamesAfter(w, before);
    expect(names.filter((n) => n === 'dsync.group.user_added')).toHaveLength(100);
    expect(names.filter((n) => n === 'organization_membership.updated')).toHaveLength(100);
    const list = await w.env.caller.organizationMemberships.list({ organization_id: w.organizationId, limit: 100 });
    expect(list.data.every((m) => m.roles.map((r) => r.slug).join() === 'admin')).toBe(true);
  });
});
