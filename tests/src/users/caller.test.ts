import { events, organizationMemberships, users } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { failure, newMember, uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function storedUsers(env: TestEnvironment) {
  return env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
}

async function eventsOf(env: TestEnvironment, name: string) {
  return env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), eq(events.event, name)))
    .orderBy(events.id);
}

describe('users (caller)', () => {
  it('creates, reads, updates, lists and deletes a user', async () => {
    const env = await newEnvironment();
    const email = uniqueEmail('Ada');
    const user = await env.caller.users.create({
      email,
      first_name: 'Ada',
      last_name: 'Lovelace',
      external_id: 'ext-1',
      metadata: { team: 'math' },
    });
    expect(user).toMatchObject({
      object: 'user',
      email,
      email_verified: false,
      first_name: 'Ada',
      last_name: 'Lovelace',
      profile_picture_url: null,
      last_sign_in_at: null,
      external_id: 'ext-1',
      metadata: { team: 'math' },
    });
    expect(user.id).toMatch(/^user_[0-9A-Z]{26}$/);
    expect(await env.caller.users.get({ id: user.id })).toEqual(user);

    const updated = await env.caller.users.update({ id: user.id, first_name: 'Augusta', last_name: null });
    expect(updated).toMatchObject({ first_name: 'Augusta', last_name: null, email, external_id: 'ext-1' });

    const list = await env.caller.users.list({});
    expect(list.data).toEqual([updated]);

    await env.caller.users.delete({ id: user.id });
    expect(await failure(env.caller.users.get({ id: user.id }))).toEqual({ status: 404, code: 'entity_not_found' });
    expect(await storedUsers(env)).toEqual([]);
    expect((await eventsOf(env, 'user.created')).map((e) => e.data)).toEqual([user]);
    expect((await eventsOf(env, 'user.updated')).map((e) => e.data)).toEqual([updated]);
    expect(await eventsOf(env, 'user.deleted')).toHaveLength(1);
  });

  it('filters by email case-insensitively and by organization', async () => {
    const env = await newEnvironment();
    const a = await env.caller.users.create({ email: uniqueEmail('a') });
    const { user: b, organizationId } = await newMember(env);
    const byEmail = await env.caller.users.list({ email: a.email.toUpperCase() });
    expect(byEmail.data.map((u) => u.id)).toEqual([a.id]);
    const byOrg = await env.caller.users.list({ organization_id: organizationId });
    expect(byOrg.data.map((u) => u.id)).toEqual([b.id]);
  });

  it('an e-mail is unique per environment, case-insensitively (409), but free in another environment', async () => {
    const env = await newEnvironment();
    const email = uniqueEmail();
    await env.caller.users.create({ email });
    expect(await failure(env.caller.users.create({ email: email.toUpperCase() }))).toEqual({
      status: 409,
      code: 'email_not_available',
    });
    const other = await newEnvironment();
    expect((await other.caller.users.create({ email })).email).toBe(email);
    expect(await storedUsers(env)).toHaveLength(1);
  });

  it('changing the email to one taken (in any case) is 409 and changes nothing', async () => {
    const env = await newEnvironment();
    const a = await env.caller.users.create({ email: uniqueEmail('a') });
    const b = await env.caller.users.create({ email: uniqueEmail('b') });
    expect(await failure(env.caller.users.update({ id: b.id, email: a.email.toUpperCase() }))).toEqual({
      status: 409,
      code: 'email_not_available',
    });
    expect(await env.caller.users.get({ id: b.id })).toEqual(b);
  });

  it('an external_id taken is 409 external_id_already_used (a uniqueness conflict, as for organizations)', async () => {
    const env = await newEnvironment();
    await env.caller.users.create({ email: uniqueEmail(), external_id: 'x' });
    const second = await env.caller.users.create({ email: uniqueEmail() });
    expect(await failure(env.caller.users.create({ email: uniqueEmail(), external_id: 'x' }))).toEqual({
      status: 409,
      code: 'external_id_already_used',
    });
    expect(await failure(env.caller.users.update({ id: second.id, external_id: 'x' }))).toEqual({
      status: 409,
      code: 'external_id_already_used',
    });
    expect(await storedUsers(env)).toHaveLength(2);
  });

  describe.each([
    ['no email', {}],
    ['a malformed email', { email: 'not-an-email' }],
    ['a numeric first_name', { email: 'ok@example.com', first_name: 3 }],
    ['metadata with a number', { email: 'ok@example.com', metadata: { a: 1 } }],
  ])('create with %s', (_label, body) => {
    it('is 422 and stores nothing', async () => {
      const env = await newEnvironment();
      expect(await failure(env.caller.users.create(body as { email: string }))).toEqual({
        status: 422,
        code: 'invalid_request_parameters',
      });
      expect(await storedUsers(env)).toEqual([]);
    });
  });

  it('a user of another environment is 404 for get, update and delete', async () => {
    const env = await newEnvironment();
    const user = await env.caller.users.create({ email: uniqueEmail() });
    const stranger = await newEnvironment();
    const notFound = { status: 404, code: 'entity_not_found' };
    expect(await failure(stranger.caller.users.get({ id: user.id }))).toEqual(notFound);
    expect(await failure(stranger.caller.users.update({ id: user.id, first_name: 'X' }))).toEqual(notFound);
    expect(await failure(stranger.caller.users.delete({ id: user.id }))).toEqual(notFound);
    expect((await stranger.caller.users.list({})).data).toEqual([]);
    expect(await env.caller.users.get({ id: user.id })).toEqual(user);
  });

  it('deleting a user deletes their memberships and records each deletion', async () => {
    const env = await newEnvironment();
    const { user, membership } = await newMember(env);
    await env.caller.users.delete({ id: user.id });
    const rows = await env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.environmentId, env.environmentId));
    expect(rows).toEqual([]);
    // Upstream's membership events carry no embedded user (the API's answers do).
    const { user: embedded, ...payload } = membership;
    expect(embedded).toEqual(user);
    expect((await eventsOf(env, 'organization_membership.deleted')).map((e) => e.data)).toStrictEqual([payload]);
  });
});
