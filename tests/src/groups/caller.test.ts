import { events, groupMemberships, groups, organizationMemberships } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { failure, newMember, uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function links(env: TestEnvironment, groupId: string) {
  return env.deps.db.select().from(groupMemberships).where(eq(groupMemberships.groupId, groupId));
}

async function eventNames(env: TestEnvironment) {
  const rows = await env.deps.db
    .select({ event: events.event })
    .from(events)
    .where(eq(events.environmentId, env.environmentId))
    .orderBy(events.id);
  return rows.map((row) => row.event);
}

describe('groups (caller)', () => {
  it('creates, reads, lists, updates and deletes a group', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const created = await env.caller.groups.create({ organization_id: org.id, name: 'Engineering' });
    expect(created).toMatchObject({
      object: 'group',
      organization_id: org.id,
      name: 'Engineering',
      description: null,
    });
    expect(created.id).toMatch(/^group_[0-9A-Z]{26}$/);
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const read = await env.caller.groups.get({ organization_id: org.id, group_id: created.id });
    expect(read).toEqual(created);

    const list = await env.caller.groups.list({ organization_id: org.id });
    expect(list).toEqual({ object: 'list', data: [created], list_metadata: { before: null, after: null } });

    const updated = await env.caller.groups.update({
      organization_id: org.id,
      group_id: created.id,
      name: 'Eng',
      description: 'Builders',
    });
    expect(updated).toMatchObject({ name: 'Eng', description: 'Builders' });

    await env.caller.groups.delete({ organization_id: org.id, group_id: created.id });
    expect(await failure(env.caller.groups.get({ organization_id: org.id, group_id: created.id }))).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
    expect((await eventNames(env)).filter((name) => name.startsWith('group.'))).toEqual([
      'group.created',
      'group.updated',
      'group.deleted',
    ]);
  });

  it('PATCH changes only the fields it carries; null clears the description', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const g = await env.caller.groups.create({ organization_id: org.id, name: 'A', description: 'first' });
    const path = { organization_id: org.id, group_id: g.id };

    const onlyName = await env.caller.groups.update({ ...path, name: 'B' });
    expect(onlyName).toMatchObject({ name: 'B', description: 'first' });

    const onlyDescription = await env.caller.groups.update({ ...path, description: 'second' });
    expect(onlyDescription).toMatchObject({ name: 'B', description: 'second' });

    const cleared = await env.caller.groups.update({ ...path, description: null });
    expect(cleared).toMatchObject({ name: 'B', description: null });

    const nothing = await env.caller.groups.update(path);
    expect(nothing).toEqual(cleared);
    const [row] = await env.deps.db.select().from(groups).where(eq(groups.id, g.id));
    expect(row).toMatchObject({ name: 'B', description: null });
  });

  describe.each([
    ['a missing name', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a name of 257 characters', { name: 'x'.repeat(257) }, 'name'],
    ['a description of 151 characters', { name: 'ok', description: 'x'.repeat(151) }, 'description'],
    ['a numeric name', { name: 42 }, 'name'],
  ])('create with %s', (_label, body, field) => {
    it('is 422 and stores nothing', async () => {
      const env = await newEnvironment();
      const org = await env.caller.organizations.create({ name: 'Acme' });
      try {
        await env.caller.groups.create({ organization_id: org.id, ...(body as { name: string }) });
        expect.unreachable();
      } catch (error) {
        const e = error as { status: number; apiCode: string; errors: { field: string }[] };
        expect(e.status).toBe(422);
        expect(e.apiCode).toBe('invalid_request_parameters');
        expect(e.errors.map((x) => x.field)).toContain(field);
      }
      const rows = await env.deps.db.select().from(groups).where(eq(groups.environmentId, env.environmentId));
      expect(rows).toEqual([]);
    });
  });

  it('accepts the limits exactly: 256-char name, 150-char description', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const g = await env.caller.groups.create({
      organization_id: org.id,
      name: 'n'.repeat(256),
      description: 'd'.repeat(150),
    });
    expect(g.name).toHaveLength(256);
    expect(g.description).toHaveLength(150);
  });

  it('a group reached through another organization or environment is 404', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const other = await env.caller.organizations.create({ name: 'Other' });
    const g = await env.caller.groups.create({ organization_id: org.id, name: 'G' });
    const { membership } = await newMember(env, org.id);
    const foreign = { organization_id: other.id, group_id: g.id };
    const notFound = { status: 404, code: 'entity_not_found' };
    expect(await failure(env.caller.groups.get(foreign))).toEqual(notFound);
    expect(await failure(env.caller.groups.update({ ...foreign, name: 'X' }))).toEqual(notFound);
    expect(await failure(env.caller.groups.delete(foreign))).toEqual(notFound);
    expect(await failure(env.caller.groups.memberships.list(foreign))).toEqual(notFound);
    expect(
      await failure(env.caller.groups.memberships.add({ ...foreign, organization_membership_id: membership.id })),
    ).toEqual(notFound);

    const stranger = await newEnvironment();
    const path = { organization_id: org.id, group_id: g.id };
    expect(await failure(stranger.caller.groups.get(path))).toEqual(notFound);
    expect(await failure(stranger.caller.groups.list({ organization_id: org.id }))).toEqual(notFound);
    expect(await failure(stranger.caller.groups.delete(path))).toEqual(notFound);
    expect(await failure(stranger.caller.groups.create({ organization_id: org.id, name: 'X' }))).toEqual(notFound);
    expect(await failure(stranger.caller.groups.listForMembership({ id: membership.id }))).toEqual(notFound);
    expect((await env.caller.groups.get(path)).name).toBe('G');
  });

  it('adds a membership (returning the group), twice as a no-op, lists it both ways and removes it', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    const a = await env.caller.groups.create({ organization_id: organizationId, name: 'A' });
    const b = await env.caller.groups.create({ organization_id: organizationId, name: 'B' });
    const pathA = { organization_id: organizationId, group_id: a.id };
    const pathB = { organization_id: organizationId, group_id: b.id };

    const added = await env.caller.groups.memberships.add({ ...pathA, organization_membership_id: membership.id });
    expect(added).toEqual(a);
    const again = await env.caller.groups.memberships.add({ ...pathA, organization_membership_id: membership.id });
    expect(again).toEqual(a);
    expect(await links(env, a.id)).toHaveLength(1);
    await env.caller.groups.memberships.add({ ...pathB, organization_membership_id: membership.id });

    const members = await env.caller.groups.memberships.list(pathA);
    expect(members.data).toEqual([membership]);
    const ofMembership = await env.caller.groups.listForMembership({ id: membership.id, order: 'asc' });
    expect(ofMembership.data.map((g) => g.id)).toEqual([a.id, b.id]);

    await env.caller.groups.memberships.remove({ ...pathA, organization_membership_id: membership.id });
    expect((await env.caller.groups.memberships.list(pathA)).data).toEqual([]);
    expect((await env.caller.groups.listForMembership({ id: membership.id })).data.map((g) => g.id)).toEqual([b.id]);
    // The membership itself stays.
    expect(await env.caller.organizationMemberships.get({ id: membership.id })).toEqual(membership);
    // Removing it again is 404: it is no longer in the group.
    expect(
      await failure(env.caller.groups.memberships.remove({ ...pathA, organization_membership_id: membership.id })),
    ).toEqual({ status: 404, code: 'entity_not_found' });

    const names = await eventNames(env);
    expect(names.filter((n) => n.startsWith('group.member'))).toEqual([
      'group.member_added',
      'group.member_added',
      'group.member_removed',
    ]);
    const [added1] = await env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'group.member_added')))
      .orderBy(events.id)
      .limit(1);
    expect(added1?.data).toEqual({ group_id: a.id, organization_membership_id: membership.id });
    expect(added1?.organizationId).toBe(organizationId);
  });

  it('refuses a membership of another organization or another environment', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const g = await env.caller.groups.create({ organization_id: org.id, name: 'G' });
    const path = { organization_id: org.id, group_id: g.id };
    const otherOrg = await newMember(env);
    const stranger = await newEnvironment();
    const strangers = await newMember(stranger);
    for (const id of [otherOrg.membership.id, strangers.membership.id, 'om_01HE8GSH8FQPASKSY27THRKRBP']) {
      expect(await failure(env.caller.groups.memberships.add({ ...path, organization_membership_id: id }))).toEqual({
        status: 404,
        code: 'entity_not_found',
      });
    }
    expect(await links(env, g.id)).toEqual([]);
  });

  it('deleting a group removes its links but keeps the memberships', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    const g = await env.caller.groups.create({ organization_id: organizationId, name: 'G' });
    await env.caller.groups.memberships.add({
      organization_id: organizationId,
      group_id: g.id,
      organization_membership_id: membership.id,
    });
    await env.caller.groups.delete({ organization_id: organizationId, group_id: g.id });
    expect(await links(env, g.id)).toEqual([]);
    expect(await env.caller.organizationMemberships.get({ id: membership.id })).toEqual(membership);
  });

  it.each(['membership', 'user', 'organization'] as const)(
    'deleting the %s removes the membership from every group',
    async (what) => {
      const env = await newEnvironment();
      const { organizationId, membership, user } = await newMember(env);
      const keep = await newMember(env, organizationId);
      const g1 = await env.caller.groups.create({ organization_id: organizationId, name: 'G1' });
      const g2 = await env.caller.groups.create({ organization_id: organizationId, name: 'G2' });
      for (const g of [g1, g2]) {
        for (const m of [membership, keep.membership]) {
          await env.caller.groups.memberships.add({
            organization_id: organizationId,
            group_id: g.id,
            organization_membership_id: m.id,
          });
        }
      }
      if (what === 'membership') await env.caller.organizationMemberships.delete({ id: membership.id });
      if (what === 'user') await env.caller.users.delete({ id: user.id });
      if (what === 'organization') await env.caller.organizations.delete({ id: organizationId });

      const remaining = await env.deps.db
        .select()
        .from(groupMemberships)
        .where(eq(groupMemberships.environmentId, env.environmentId));
      const expected = what === 'organization' ? [] : [keep.membership.id, keep.membership.id];
      expect(remaining.map((r) => r.organizationMembershipId)).toEqual(expected);
      const gone = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(eq(organizationMemberships.id, membership.id));
      expect(gone).toEqual([]);
      if (what !== 'organization') {
        const list = await env.caller.groups.memberships.list({ organization_id: organizationId, group_id: g1.id });
        expect(list.data.map((m) => m.id)).toEqual([keep.membership.id]);
      }
    },
  );

  it('50 parallel adds of the same membership leave exactly one link and no error', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    const g = await env.caller.groups.create({ organization_id: organizationId, name: 'G' });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () =>
        env.caller.groups.memberships.add({
          organization_id: organizationId,
          group_id: g.id,
          organization_membership_id: membership.id,
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await links(env, g.id)).toHaveLength(1);
    const added = (await eventNames(env)).filter((n) => n === 'group.member_added');
    expect(added).toHaveLength(1);
  });

  it('the groups flag gates every group operation with 403 feature_not_enabled', async () => {
    const env = await newEnvironment({ flags: { groups: false } });
    const { organizationId, membership } = await newMember(env);
    const path = { organization_id: organizationId, group_id: 'group_01HE8GSH8FQPASKSY27THRKRBP' };
    const off = { status: 403, code: 'feature_not_enabled' };
    expect(await failure(env.caller.groups.list({ organization_id: organizationId }))).toEqual(off);
    expect(await failure(env.caller.groups.create({ organization_id: organizationId, name: 'G' }))).toEqual(off);
    expect(await failure(env.caller.groups.get(path))).toEqual(off);
    expect(await failure(env.caller.groups.update({ ...path, name: 'X' }))).toEqual(off);
    expect(await failure(env.caller.groups.delete(path))).toEqual(off);
    expect(await failure(env.caller.groups.memberships.list(path))).toEqual(off);
    expect(
      await failure(env.caller.groups.memberships.add({ ...path, organization_membership_id: membership.id })),
    ).toEqual(off);
    expect(
      await failure(env.caller.groups.memberships.remove({ ...path, organization_membership_id: membership.id })),
    ).toEqual(off);
    expect(await failure(env.caller.groups.listForMembership({ id: membership.id }))).toEqual(off);
    const rows = await env.deps.db.select().from(groups).where(eq(groups.environmentId, env.environmentId));
    expect(rows).toEqual([]);
    // Users and memberships are not flagged.
    expect((await env.caller.users.create({ email: uniqueEmail() })).object).toBe('user');
  });
});
