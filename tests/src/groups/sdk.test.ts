import { WorkOS } from '@workos-inc/node';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

function sdkOf(env: TestEnvironment): WorkOS {
  const port = Number(new URL(env.world.url).port);
  return new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });
}

describe('the official @workos-inc/node SDK', () => {
  it('creates a user and a membership, puts it in two groups, lists both ways and removes it', async () => {
    const env = await newEnvironment();
    const workos = sdkOf(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });

    const email = uniqueEmail('sdk');
    const user = await workos.userManagement.createUser({ email, firstName: 'Sam', lastName: 'Dee' });
    expect(user).toMatchObject({
      object: 'user',
      email,
      firstName: 'Sam',
      lastName: 'Dee',
      emailVerified: false,
      externalId: null,
      metadata: {},
    });
    expect(user.id).toMatch(/^user_/);

    const membership = await workos.userManagement.createOrganizationMembership({
      userId: user.id,
      organizationId: org.id,
    });
    expect(membership).toMatchObject({
      object: 'organization_membership',
      userId: user.id,
      organizationId: org.id,
      organizationName: 'Acme',
      status: 'active',
      directoryManaged: false,
      customAttributes: {},
    });
    expect(membership.id).toMatch(/^om_/);

    const engineering = await workos.groups.createGroup({ organizationId: org.id, name: 'Engineering' });
    expect(engineering).toMatchObject({
      object: 'group',
      organizationId: org.id,
      name: 'Engineering',
      description: null,
    });
    expect(engineering.createdAt).toBeInstanceOf(Date);
    expect(Number.isNaN(engineering.createdAt.getTime())).toBe(false);
    const oncall = await workos.groups.createGroup({
      organizationId: org.id,
      name: 'On-call',
      description: 'Pager holders',
    });
    expect(oncall.description).toBe('Pager holders');

    const fetched = await workos.groups.getGroup({ organizationId: org.id, groupId: oncall.id });
    expect(fetched).toEqual(oncall);

    const renamed = await workos.groups.updateGroup({
      organizationId: org.id,
      groupId: engineering.id,
      name: 'Eng',
      description: 'Builders',
    });
    expect(renamed).toMatchObject({ id: engineering.id, name: 'Eng', description: 'Builders' });

    const listed = await workos.groups.listGroups({ organizationId: org.id, order: 'asc' });
    expect(listed.data.map((g) => g.id)).toEqual([engineering.id, oncall.id]);
    expect(listed.listMetadata).toEqual({ before: null, after: null });

    for (const group of [engineering, oncall]) {
      const returned = await workos.groups.addOrganizationMembership({
        organizationId: org.id,
        groupId: group.id,
        organizationMembershipId: membership.id,
      });
      expect(returned.id).toBe(group.id);
      expect(returned.object).toBe('group');
    }

    const members = await workos.groups.listOrganizationMemberships({ organizationId: org.id, groupId: oncall.id });
    expect(members.data).toHaveLength(1);
    expect(members.data[0]).toMatchObject({
      object: 'organization_membership',
      id: membership.id,
      userId: user.id,
      organizationId: org.id,
      status: 'active',
      directoryManaged: false,
    });

    const ofMembership = await workos.userManagement.listGroupsForOrganizationMembership({
      organizationMembershipId: membership.id,
    });
    expect(ofMembership.data.map((g) => g.id).sort()).toEqual([engineering.id, oncall.id].sort());

    await workos.groups.removeOrganizationMembership({
      organizationId: org.id,
      groupId: oncall.id,
      organizationMembershipId: membership.id,
    });
    const after = await workos.groups.listOrganizationMemberships({ organizationId: org.id, groupId: oncall.id });
    expect(after.data).toEqual([]);
    // The membership survives its removal from the group.
    const still = await workos.userManagement.getOrganizationMembership(membership.id);
    expect(still.id).toBe(membership.id);

    await workos.groups.deleteGroup({ organizationId: org.id, groupId: oncall.id });
    await expect(workos.groups.getGroup({ organizationId: org.id, groupId: oncall.id })).rejects.toMatchObject({
      status: 404,
    });
    const remaining = await workos.groups.listGroups({ organizationId: org.id });
    expect(remaining.data.map((g) => g.id)).toEqual([engineering.id]);
  });

  it('updateGroup with only a name clears the description, as the SDK sends description: null', async () => {
    const env = await newEnvironment();
    const workos = sdkOf(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const g = await workos.groups.createGroup({ organizationId: org.id, name: 'G', description: 'd' });
    const updated = await workos.groups.updateGroup({ organizationId: org.id, groupId: g.id, name: 'H' });
    expect(updated).toMatchObject({ name: 'H', description: null });
  });

  it('auto-paginates a group of 105 memberships (two SDK pages) and maps errors to the SDK exceptions', async () => {
    const env = await newEnvironment();
    const workos = sdkOf(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const group = await workos.groups.createGroup({ organizationId: org.id, name: 'All' });
    const expected: string[] = [];
    for (let i = 0; i < 105; i++) {
      const u = await env.caller.users.create({ email: uniqueEmail(`p${i}`) });
      const m = await env.caller.organizationMemberships.create({ user_id: u.id, organization_id: org.id });
      await env.caller.groups.memberships.add({
        organization_id: org.id,
        group_id: group.id,
        organization_membership_id: m.id,
      });
      expected.push(m.id);
    }
    const page = await workos.groups.listOrganizationMemberships({ organizationId: org.id, groupId: group.id });
    const all = await page.autoPagination();
    expect(all.map((m) => m.id).sort()).toEqual([...expected].sort());

    await expect(workos.userManagement.createUser({ email: 'not-an-email' })).rejects.toMatchObject({ status: 422 });
    const email = uniqueEmail();
    await workos.userManagement.createUser({ email });
    await expect(workos.userManagement.createUser({ email })).rejects.toMatchObject({ status: 409 });

    const off = await newEnvironment({ flags: { groups: false } });
    await expect(sdkOf(off).groups.listGroups({ organizationId: org.id })).rejects.toMatchObject({ status: 403 });
  });
});
