import { directories, directoryGroupMembers, directoryUsers, users } from '@atrium/db';
import {
  createDirectoryGroup,
  createDirectoryUser,
  deactivateDirectory,
  deleteDirectory,
  deleteDirectoryUser,
  replaceDirectoryUser,
  writeDirectoryGroup,
} from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { getWorld } from '../helpers/world.ts';
import {
  directoryUserRow,
  directoryWorld,
  eventNamesAfter,
  eventsOf,
  groupFields,
  groupRows,
  membershipOfUser,
  membershipRows,
  refusal,
  sessionRow,
  signIn,
  signInWithToken,
  tokenAccepted,
  userFields,
  usersWithEmail,
} from './provisioning-world.ts';

// The worker's database is built here, within the hook's time, not the first test's.
beforeAll(() => getWorld());

describe('directory users provision Atrium users and directory-managed memberships', () => {
  it('an active user with an e-mail: a user (names set), an active directory-managed membership, the link, the events', async () => {
    const w = await directoryWorld();
    const before = (await eventsOf(w)).length;
    const email = uniqueEmail('ada');
    const row = await createDirectoryUser(
      w.scope,
      w.directory,
      userFields({ email, firstName: 'Ada', lastName: 'King' }),
    );

    const [user] = await usersWithEmail(w, email);
    expect(user).toMatchObject({ email, firstName: 'Ada', lastName: 'King' });
    expect(row.userId).toBe(user?.id);
    expect((await directoryUserRow(w, row.id))?.userId).toBe(user?.id);
    const membership = await membershipOfUser(w, user?.id as string);
    expect(membership).toMatchObject({
      status: 'active',
      directory_managed: true,
      role: { slug: 'member' },
      roles: [{ slug: 'member' }],
    });
    // The first SCIM write links the directory: `dsync.activated` comes first, by id and by time.
    expect((await w.fresh()).state).toBe('linked');
    expect((await w.fresh()).lastSyncAt).not.toBeNull();
    expect(await eventNamesAfter(w, before)).toEqual([
      'dsync.activated',
      'user.created',
      'organization_membership.created',
      'dsync.user.created',
    ]);
    const times = (await eventsOf(w)).slice(before).map((e) => e.createdAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('links an existing user of the environment by e-mail, in any case, and never makes a second one', async () => {
    const w = await directoryWorld();
    const email = uniqueEmail('grace');
    const existing = await w.env.caller.users.create({ email, first_name: 'Grace' });
    const row = await createDirectoryUser(
      w.scope,
      await w.fresh(),
      userFields({ email: email.toUpperCase(), firstName: 'G', lastName: 'H' }),
    );
    expect(row.userId).toBe(existing.id);
    const found = await usersWithEmail(w, email);
    expect(found.map((u) => u.id)).toEqual([existing.id]);
    // The existing user keeps its own names.
    expect(found[0]).toMatchObject({ firstName: 'Grace', lastName: null });
    expect(await membershipOfUser(w, existing.id)).toMatchObject({ status: 'active', directory_managed: true });

    // A second directory user with the same e-mail links the same user and the same membership.
    const again = await createDirectoryUser(w.scope, await w.fresh(), userFields({ email }));
    expect(again.userId).toBe(existing.id);
    expect(await usersWithEmail(w, email)).toHaveLength(1);
    expect((await membershipRows(w)).filter((m) => m.userId === existing.id)).toHaveLength(1);
  });

  it("an existing membership becomes directory-managed and active, keeping its roles until the directory's groups say otherwise", async () => {
    const w = await directoryWorld();
    const email = uniqueEmail('admin');
    const existing = await w.env.caller.users.create({ email });
    const membership = await w.env.caller.organizationMemberships.create({
      user_id: existing.id,
      organization_id: w.organizationId,
      role_slug: 'admin',
    });
    await w.env.caller.organizationMemberships.deactivate({ id: membership.id });
    const before = (await eventsOf(w)).length;
    await createDirectoryUser(w.scope, w.directory, userFields({ email }));
    expect(await membershipOfUser(w, existing.id)).toMatchObject({
      id: membership.id,
      status: 'active',
      directory_managed: true,
      roles: [{ slug: 'admin' }],
    });
    expect(await eventNamesAfter(w, before)).toEqual([
      'dsync.activated',
      'organization_membership.updated',
      'dsync.user.created',
    ]);
  });

  it('an inactive user, or one without a usable e-mail, is stored but provisions nothing, until it is active with one', async () => {
    const w = await directoryWorld();
    const inactive = await createDirectoryUser(w.scope, w.directory, userFields({ active: false }));
    const noEmail = await createDirectoryUser(w.scope, await w.fresh(), userFields({ email: null, userName: 'jdoe' }));
    const badEmail = await createDirectoryUser(w.scope, await w.fresh(), userFields({ email: 'not an e-mail' }));
    expect([inactive.userId, noEmail.userId, badEmail.userId]).toEqual([null, null, null]);
    expect(await membershipRows(w)).toEqual([]);

    const email = uniqueEmail('late');
    const updated = await replaceDirectoryUser(
      w.scope,
      await w.fresh(),
      noEmail.id,
      userFields({ email, userName: 'jdoe' }),
    );
    expect(updated.userId).not.toBeNull();
    expect(await membershipOfUser(w, updated.userId as string)).toMatchObject({
      status: 'active',
      directory_managed: true,
    });
  });

  it('active: false deactivates the membership and revokes the sessions in that organization at once; active again reactivates it', async () => {
    const w = await directoryWorld();
    const fields = userFields();
    const row = await createDirectoryUser(w.scope, w.directory, fields);
    const userId = row.userId as string;
    const { sid, token } = await signInWithToken(w, userId);
    expect(await tokenAccepted(w, token)).toBe(true);
    // A session of the same user in another organization is left alone.
    const other = await w.env.caller.organizations.create({ name: 'Other' });
    await w.env.caller.organizationMemberships.create({ user_id: userId, organization_id: other.id });
    const { token: otherToken } = await w.env.caller.clientTokens.create({
      organization_id: other.id,
      user_id: userId,
    });
    const before = (await eventsOf(w)).length;

    const off = { ...fields, active: false, attributes: { ...fields.attributes, active: false } };
    const updated = await replaceDirectoryUser(w.scope, await w.fresh(), row.id, off);
    expect(updated).toMatchObject({ state: 'inactive', userId, version: 2 });
    expect(await membershipOfUser(w, userId)).toMatchObject({ status: 'inactive', directory_managed: true });
    expect((await sessionRow(w, sid))?.revokedAt).not.toBeNull();
    expect(await tokenAccepted(w, token)).toBe(false);
    expect(await w.env.caller.sessions.list({ id: userId })).toMatchObject({
      data: expect.arrayContaining([expect.objectContaining({ id: sid, status: 'revoked' })]),
    });
    expect(otherToken).toBeTruthy();
    const live = (await w.env.caller.sessions.list({ id: userId })).data.filter((s) => s.status === 'active');
    expect(live.map((s) => s.organization_id)).toEqual([other.id]);
    expect(await eventNamesAfter(w, before)).toEqual([
      'organization_membership.updated',
      'session.revoked',
      'dsync.user.updated',
    ]);
    const updatedEvent = (await eventsOf(w)).at(-1);
    expect(updatedEvent?.data).toMatchObject({ id: row.id, state: 'inactive', previous_attributes: { active: true } });

    // The same write again changes nothing and says nothing.
    const again = (await eventsOf(w)).length;
    await replaceDirectoryUser(w.scope, await w.fresh(), row.id, off);
    expect(await eventNamesAfter(w, again)).toEqual([]);

    await replaceDirectoryUser(w.scope, await w.fresh(), row.id, fields);
    expect(await membershipOfUser(w, userId)).toMatchObject({ status: 'active', directory_managed: true });
    // The revoked session stays revoked: reactivation needs a new sign-in.
    expect((await sessionRow(w, sid))?.revokedAt).not.toBeNull();
    expect(await tokenAccepted(w, token)).toBe(false);
    expect(await tokenAccepted(w, (await signInWithToken(w, userId)).token)).toBe(true);
  });

  it('deleting the directory user deactivates the membership and revokes its sessions; the Atrium user stays', async () => {
    const w = await directoryWorld();
    const row = await createDirectoryUser(w.scope, w.directory, userFields());
    const userId = row.userId as string;
    const sid = await signIn(w, userId);
    const before = (await eventsOf(w)).length;
    await deleteDirectoryUser(w.scope, await w.fresh(), row.id);
    expect(await directoryUserRow(w, row.id)).toBeUndefined();
    expect(await membershipOfUser(w, userId)).toMatchObject({ status: 'inactive' });
    expect((await sessionRow(w, sid))?.revokedAt).not.toBeNull();
    expect(await w.env.caller.users.get({ id: userId })).toMatchObject({ id: userId });
    expect(await eventNamesAfter(w, before)).toEqual([
      'organization_membership.updated',
      'session.revoked',
      'dsync.user.deleted',
    ]);
    expect(await refusal(deleteDirectoryUser(w.scope, await w.fresh(), row.id))).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
  });

  it('a membership another active directory user of the organization still provisions stays active', async () => {
    const w = await directoryWorld();
    const email = uniqueEmail('twice');
    const a = await createDirectoryUser(w.scope, w.directory, userFields({ email }));
    const b = await createDirectoryUser(w.scope, await w.fresh(), userFields({ email }));
    await deleteDirectoryUser(w.scope, await w.fresh(), a.id);
    expect(await membershipOfUser(w, b.userId as string)).toMatchObject({ status: 'active' });
    await deleteDirectoryUser(w.scope, await w.fresh(), b.id);
    expect(await membershipOfUser(w, b.userId as string)).toMatchObject({ status: 'inactive' });
  });

  it('deleting the Atrium user unlinks the directory user; its next write provisions a new user', async () => {
    const w = await directoryWorld();
    const fields = userFields();
    const row = await createDirectoryUser(w.scope, w.directory, fields);
    await w.env.caller.users.delete({ id: row.userId as string });
    expect((await directoryUserRow(w, row.id))?.userId).toBeNull();
    const updated = await replaceDirectoryUser(w.scope, await w.fresh(), row.id, { ...fields, firstName: 'Augusta' });
    expect(updated.userId).not.toBeNull();
    expect(updated.userId).not.toBe(row.userId);
    expect(await membershipOfUser(w, updated.userId as string)).toMatchObject({ status: 'active' });
    // Deleting the new user, then the directory user: nothing breaks.
    await w.env.caller.users.delete({ id: updated.userId as string });
    await deleteDirectoryUser(w.scope, await w.fresh(), row.id);
    expect(await directoryUserRow(w, row.id)).toBeUndefined();
  });

  it('refused input stores nothing: a taken userName (409), a member that is not a user of the directory (422)', async () => {
    const w = await directoryWorld();
    const fields = userFields();
    await createDirectoryUser(w.scope, w.directory, fields);
    const before = await eventsOf(w);
    const usersBefore = await w.env.deps.db.select().from(users).where(eq(users.environmentId, w.env.environmentId));

    const taken = await refusal(
      createDirectoryUser(w.scope, await w.fresh(), {
        ...fields,
        email: uniqueEmail('other'),
        userName: fields.userName.toUpperCase(),
      }),
    );
    expect(taken).toEqual({ status: 409, code: 'directory_user_exists' });
    const group = await refusal(
      createDirectoryGroup(w.scope, await w.fresh(), groupFields('Ghosts'), [
        'directory_user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
      ]),
    );
    expect(group).toEqual({ status: 422, code: 'invalid_members' });

    expect(await eventsOf(w)).toEqual(before);
    expect(await w.env.deps.db.select().from(users).where(eq(users.environmentId, w.env.environmentId))).toEqual(
      usersBefore,
    );
    expect(await groupRows(w)).toEqual([]);
    const stored = await w.env.deps.db
      .select()
      .from(directoryUsers)
      .where(eq(directoryUsers.directoryId, w.directory.id));
    expect(stored).toHaveLength(1);
  });

  it('concurrent first writes link the directory once (one dsync.activated); two concurrent PATCHes of one group both apply', async () => {
    const w = await directoryWorld();
    const [a, b] = await Promise.all([
      createDirectoryUser(w.scope, w.directory, userFields()),
      createDirectoryUser(w.scope, w.directory, userFields()),
    ]);
    const activated = (await eventsOf(w)).filter((e) => e.event === 'dsync.activated');
    expect(activated).toHaveLength(1);
    const group = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Engineering'), []);
    const dir = await w.fresh();
    await Promise.all([
      writeDirectoryGroup(w.scope, dir, group.id, undefined, { add: [a.id], remove: [] }),
      writeDirectoryGroup(w.scope, dir, group.id, undefined, { add: [b.id], remove: [] }),
    ]);
    const members = await w.env.deps.db
      .select()
      .from(directoryGroupMembers)
      .where(eq(directoryGroupMembers.groupId, group.id));
    expect(members.map((m) => m.directoryUserId).sort()).toEqual([a.id, b.id].sort());
    expect((await eventsOf(w)).filter((e) => e.event === 'dsync.group.user_added')).toHaveLength(2);
  });

  it('concurrent creates of users with one e-mail in two directories of the environment make one user', async () => {
    const one = await directoryWorld();
    const two = await directoryWorld(one.env);
    const email = uniqueEmail('race');
    const [a, b] = await Promise.all([
      createDirectoryUser(one.scope, one.directory, userFields({ email })),
      createDirectoryUser(two.scope, two.directory, userFields({ email })),
    ]);
    expect(a.userId).toBe(b.userId);
    expect(await usersWithEmail(one, email)).toHaveLength(1);
    expect(await membershipOfUser(one, a.userId as string)).toMatchObject({ status: 'active' });
    expect(await membershipOfUser(two, a.userId as string)).toMatchObject({ status: 'active' });
  });
});

describe('deleting and deactivating a directory', () => {
  it('deleting deactivates every membership it provisioned, revokes their sessions, deletes its rows and records dsync.deleted', async () => {
    const w = await directoryWorld();
    const rows = [];
    for (let i = 0; i < 3; i++) rows.push(await createDirectoryUser(w.scope, await w.fresh(), userFields()));
    const group = await createDirectoryGroup(
      w.scope,
      await w.fresh(),
      groupFields('All'),
      rows.map((r) => r.id),
    );
    const sid = await signIn(w, rows[0]?.userId as string);
    // A member the directory did not provision stays as it is.
    const manual = await w.env.caller.users.create({ email: uniqueEmail('manual') });
    await w.env.caller.organizationMemberships.create({ user_id: manual.id, organization_id: w.organizationId });
    const before = (await eventsOf(w)).length;

    const deleted = await deleteDirectory(w.scope, w.directory.id);
    expect(deleted).toMatchObject({ id: w.directory.id, state: 'deleting' });
    for (const row of rows)
      expect(await membershipOfUser(w, row.userId as string)).toMatchObject({ status: 'inactive' });
    expect(await membershipOfUser(w, manual.id)).toMatchObject({ status: 'active', directory_managed: false });
    expect((await sessionRow(w, sid))?.revokedAt).not.toBeNull();
    expect(await groupRows(w)).toEqual([]);
    expect(await directoryUserRow(w, rows[0]?.id as string)).toBeUndefined();
    const names = await eventNamesAfter(w, before);
    expect(names.filter((n) => n === 'organization_membership.updated')).toHaveLength(3);
    expect(names).toContain('session.revoked');
    expect(names.at(-1)).toBe('dsync.deleted');
    expect(names.filter((n) => n.startsWith('dsync.') && n !== 'dsync.deleted')).toEqual([]);
    const event = (await eventsOf(w)).at(-1);
    expect(event?.data).toEqual({
      object: 'directory',
      id: w.directory.id,
      organization_id: w.organizationId,
      type: 'okta scim v2.0',
      state: 'deleting',
      name: 'Acme Okta',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(group.id).toBeTruthy();
    expect(await refusal(deleteDirectory(w.scope, w.directory.id))).toEqual({ status: 404, code: 'entity_not_found' });
    // The deleted directory takes no more writes.
    expect(await refusal(createDirectoryUser(w.scope, { ...w.directory, state: 'deleting' }, userFields()))).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
  });

  it('deletes in batches, one transaction each, and an interrupted delete (left `deleting`) carries on', async () => {
    const w = await directoryWorld();
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await createDirectoryUser(w.scope, await w.fresh(), userFields()));
    for (let i = 0; i < 3; i++)
      await createDirectoryGroup(w.scope, await w.fresh(), groupFields(`G${i}`), [rows[i]?.id as string]);
    // An interrupted delete: the directory was marked, nothing was deprovisioned yet.
    await w.env.deps.db.update(directories).set({ state: 'deleting' }).where(eq(directories.id, w.directory.id));
    const before = (await eventsOf(w)).length;
    await deleteDirectory(w.scope, w.directory.id, { batchSize: 2 });
    for (const row of rows)
      expect(await membershipOfUser(w, row.userId as string)).toMatchObject({ status: 'inactive' });
    expect(await groupRows(w)).toEqual([]);
    const names = await eventNamesAfter(w, before);
    expect(names.filter((n) => n === 'organization_membership.updated')).toHaveLength(5);
    expect(names.at(-1)).toBe('dsync.deleted');
    expect(await w.env.deps.db.select().from(directories).where(eq(directories.id, w.directory.id))).toEqual([]);
  });

  it('deactivating records dsync.deactivated once and unlinks it; its next write activates it again', async () => {
    const w = await directoryWorld();
    await createDirectoryUser(w.scope, w.directory, userFields());
    const before = (await eventsOf(w)).length;
    const off = await deactivateDirectory(w.scope, w.directory.id);
    expect(off).toMatchObject({ state: 'unlinked' });
    await deactivateDirectory(w.scope, w.directory.id);
    const events = (await eventsOf(w)).slice(before);
    expect(events.map((e) => e.event)).toEqual(['dsync.deactivated']);
    expect(events[0]?.data).toMatchObject({ id: w.directory.id, state: 'inactive', domains: [] });
    const reactivated = (await eventsOf(w)).length;
    await createDirectoryUser(w.scope, await w.fresh(), userFields());
    expect((await eventNamesAfter(w, reactivated)).slice(0, 1)).toEqual(['dsync.activated']);
    expect((await w.fresh()).state).toBe('linked');
  });
});
