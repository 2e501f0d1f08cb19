import { events, organizationMemberships } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { failure, newMember, uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function storedMemberships(env: TestEnvironment) {
  return env.deps.db
    .select()
    .from(organizationMemberships)
    .where(eq(organizationMemberships.environmentId, env.environmentId));
}

async function eventNames(env: TestEnvironment) {
  const rows = await env.deps.db
    .select({ event: events.event })
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId)))
    .orderBy(events.id);
  return rows.map((r) => r.event).filter((n) => n.startsWith('organization_membership.'));
}

describe('organization memberships (caller)', () => {
  it('creates one with the specified shape; a second for the same user and organization is 409', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const user = await env.caller.users.create({ email: uniqueEmail() });
    const m = await env.caller.organizationMemberships.create({ user_id: user.id, organization_id: org.id });
    expect(m).toEqual({
      object: 'organization_membership',
      id: expect.stringMatching(/^om_[0-9A-Z]{26}$/),
      user_id: user.id,
      organization_id: org.id,
      organization_name: 'Acme',
      status: 'active',
      directory_managed: false,
      custom_attributes: {},
      role: { slug: 'member' },
      roles: [{ slug: 'member' }],
      created_at: expect.any(String),
      updated_at: expect.any(String),
      user,
    });
    expect(
      await failure(env.caller.organizationMemberships.create({ user_id: user.id, organization_id: org.id })),
    ).toEqual({ status: 409, code: 'organization_membership_already_exists' });
    expect(await storedMemberships(env)).toHaveLength(1);
    expect(await env.caller.organizationMemberships.get({ id: m.id })).toEqual(m);
  });

  it('refuses an unknown or foreign user or organization with 404 and stores nothing', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const user = await env.caller.users.create({ email: uniqueEmail() });
    const stranger = await newEnvironment();
    const foreign = await newMember(stranger);
    const notFound = { status: 404, code: 'entity_not_found' };
    for (const input of [
      { user_id: foreign.user.id, organization_id: org.id },
      { user_id: user.id, organization_id: foreign.organizationId },
      { user_id: 'user_01HE8GSH8FQPASKSY27THRKRBP', organization_id: org.id },
    ]) {
      expect(await failure(env.caller.organizationMemberships.create(input))).toEqual(notFound);
    }
    expect(await failure(env.caller.organizationMemberships.get({ id: foreign.membership.id }))).toEqual(notFound);
    expect(await storedMemberships(env)).toEqual([]);
  });

  it('organization_name follows the organization', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    await env.caller.organizations.update({ id: organizationId, name: 'Renamed' });
    expect((await env.caller.organizationMemberships.get({ id: membership.id })).organization_name).toBe('Renamed');
  });

  it('deactivates and reactivates (updated events only on change)', async () => {
    const env = await newEnvironment();
    const { membership } = await newMember(env);
    const off = await env.caller.organizationMemberships.deactivate({ id: membership.id });
    expect(off.status).toBe('inactive');
    const offAgain = await env.caller.organizationMemberships.deactivate({ id: membership.id });
    expect(offAgain).toEqual(off);
    const on = await env.caller.organizationMemberships.reactivate({ id: membership.id });
    expect(on.status).toBe('active');
    expect(await eventNames(env)).toEqual([
      'organization_membership.created',
      'organization_membership.updated',
      'organization_membership.updated',
    ]);
  });

  it('lists with user_id, organization_id and statuses filters', async () => {
    const env = await newEnvironment();
    const a = await newMember(env);
    const b = await newMember(env, a.organizationId);
    const c = await newMember(env);
    await env.caller.organizationMemberships.deactivate({ id: b.membership.id });

    const byOrg = await env.caller.organizationMemberships.list({ organization_id: a.organizationId, order: 'asc' });
    expect(byOrg.data.map((m) => m.id)).toEqual([a.membership.id, b.membership.id]);
    const byUser = await env.caller.organizationMemberships.list({ user_id: c.user.id });
    expect(byUser.data.map((m) => m.id)).toEqual([c.membership.id]);
    const inactive = await env.caller.organizationMemberships.list({ statuses: ['inactive'] });
    expect(inactive.data.map((m) => m.id)).toEqual([b.membership.id]);
    const all = await env.caller.organizationMemberships.list({ statuses: ['active', 'inactive'], limit: 2 });
    expect(all.data.map((m) => m.id)).toEqual([c.membership.id, b.membership.id]);
    expect(all.list_metadata).toEqual({ before: null, after: b.membership.id });
    expect(await failure(env.caller.organizationMemberships.list({ statuses: ['bogus' as 'active'] }))).toEqual({
      status: 422,
      code: 'invalid_request_parameters',
    });
  });

  it('deletes a membership; the user and organization stay', async () => {
    const env = await newEnvironment();
    const { membership, user, organizationId } = await newMember(env);
    await env.caller.organizationMemberships.delete({ id: membership.id });
    expect(await storedMemberships(env)).toEqual([]);
    expect((await env.caller.users.get({ id: user.id })).id).toBe(user.id);
    expect((await env.caller.organizations.get({ id: organizationId })).id).toBe(organizationId);
    expect(await failure(env.caller.organizationMemberships.delete({ id: membership.id }))).toEqual({
      status: 404,
      code: 'entity_not_found',
    });
    expect(await eventNames(env)).toEqual(['organization_membership.created', 'organization_membership.deleted']);
  });
});
