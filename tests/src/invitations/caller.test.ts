import { invitations, organizationMemberships, users } from '@atrium/db';
import { createCaller, createInnerContext, type Deps, type MailMessage } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { failure, newMember, uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A caller of the environment on deps of its own: another clock, a mailer, an accept-URL template. */
function callerWith(env: TestEnvironment, changes: Partial<Deps>) {
  return createCaller(createInnerContext({ ...env.deps, ...changes }, `Bearer ${env.apiKey}`));
}

async function stored(env: TestEnvironment) {
  return env.deps.db.select().from(invitations).where(eq(invitations.environmentId, env.environmentId));
}

async function membershipsOf(env: TestEnvironment, organizationId: string) {
  return env.deps.db
    .select()
    .from(organizationMemberships)
    .where(
      and(
        eq(organizationMemberships.environmentId, env.environmentId),
        eq(organizationMemberships.organizationId, organizationId),
      ),
    );
}

async function usersWithEmail(env: TestEnvironment, email: string) {
  return env.deps.db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, env.environmentId), eq(users.email, email)));
}

describe('invitations (caller)', () => {
  it('sends one with every field echoed, readable by id, by token and in lists', async () => {
    const env = await newEnvironment();
    const inviter = await newMember(env);
    const email = uniqueEmail('invitee');
    const before = Date.now();
    const sent = await env.caller.invitations.send({
      email,
      organization_id: inviter.organizationId,
      inviter_user_id: inviter.user.id,
      role_slug: 'admin',
      expires_in_days: 3,
    });
    expect(sent).toEqual({
      object: 'invitation',
      id: expect.stringMatching(/^invitation_[0-9A-Z]{26}$/),
      email,
      state: 'pending',
      accepted_at: null,
      revoked_at: null,
      expires_at: expect.any(String),
      organization_id: inviter.organizationId,
      inviter_user_id: inviter.user.id,
      accepted_user_id: null,
      role_slug: 'admin',
      token: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
      accept_invitation_url: `http://127.0.0.1/invite?invitation_token=${sent.token}`,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const expires = Date.parse(sent.expires_at) - Date.parse(sent.created_at);
    expect(expires).toBe(3 * DAY_MS);
    expect(Date.parse(sent.created_at)).toBeGreaterThanOrEqual(before - 1000);

    expect(await env.caller.invitations.get({ id: sent.id })).toEqual(sent);
    expect(await env.caller.invitations.findByToken({ token: sent.token })).toEqual(sent);
    expect((await env.caller.invitations.list({ organization_id: inviter.organizationId })).data).toEqual([sent]);
    expect((await env.caller.invitations.list({ email: email.toUpperCase() })).data).toEqual([sent]);
    expect((await env.caller.invitations.list({ email: uniqueEmail() })).data).toEqual([]);

    // The token is stored only hashed and sealed; the event carries neither it nor its link.
    const [row] = await stored(env);
    expect(row?.tokenHash).not.toContain(sent.token);
    expect(row?.tokenSealed).not.toContain(sent.token);
    const events = (await storedEvents(env)).filter((e) => e.event.startsWith('invitation.'));
    expect(events.map((e) => e.event)).toEqual(['invitation.created']);
    const { token: _token, accept_invitation_url: _url, ...eventData } = sent;
    expect(events[0]?.data).toEqual(eventData);
    expect(events[0]?.organizationId).toBe(inviter.organizationId);
  });

  it('defaults to 7 days, and to no organization, inviter or role', async () => {
    const env = await newEnvironment();
    const sent = await env.caller.invitations.send({ email: uniqueEmail() });
    expect(Date.parse(sent.expires_at) - Date.parse(sent.created_at)).toBe(7 * DAY_MS);
    expect(sent).toMatchObject({ organization_id: null, inviter_user_id: null, role_slug: null, state: 'pending' });
  });

  it("stores the organization's default role when none is sent, and accepting gives the invited role", async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const plain = await env.caller.invitations.send({ email: uniqueEmail(), organization_id: org.id });
    expect(plain.role_slug).toBe('member');
    const admin = await env.caller.invitations.send({
      email: uniqueEmail(),
      organization_id: org.id,
      role_slug: 'admin',
    });
    await env.caller.invitations.accept({ id: admin.id });
    await env.caller.invitations.accept({ id: plain.id });
    const { data } = await env.caller.organizationMemberships.list({ organization_id: org.id });
    const roleOf = (userId: string | null) => data.find((m) => m.user_id === userId)?.role;
    const accepted = await env.caller.invitations.list({ organization_id: org.id });
    const userOf = (id: string) => accepted.data.find((i) => i.id === id)?.accepted_user_id ?? null;
    expect(roleOf(userOf(admin.id))).toEqual({ slug: 'admin' });
    expect(roleOf(userOf(plain.id))).toEqual({ slug: 'member' });
  });

  it('uses the configured accept-URL template', async () => {
    const env = await newEnvironment();
    const caller = callerWith(env, {
      config: { ...env.deps.config, invitationUrl: 'https://app.example.com/join?t={token}&x=1' },
    });
    const sent = await caller.invitations.send({ email: uniqueEmail() });
    expect(sent.accept_invitation_url).toBe(`https://app.example.com/join?t=${sent.token}&x=1`);
  });

  it('accepting creates the user and the membership in one go, with their events', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const email = uniqueEmail('new');
    const sent = await env.caller.invitations.send({ email, organization_id: org.id, role_slug: 'member' });
    const eventsBefore = (await storedEvents(env)).length;

    const accepted = await env.caller.invitations.accept({ id: sent.id });
    const [user] = await usersWithEmail(env, email);
    expect(user?.emailVerified).toBe(true);
    expect(accepted).toEqual({
      ...sent,
      state: 'accepted',
      accepted_at: expect.any(String),
      accepted_user_id: user?.id,
      updated_at: expect.any(String),
    });
    const memberships = await membershipsOf(env, org.id);
    expect(memberships.map((m) => [m.userId, m.status])).toEqual([[user?.id, 'active']]);
    const names = (await storedEvents(env)).slice(eventsBefore).map((e) => e.event);
    expect(names).toEqual(['user.created', 'organization_membership.created', 'invitation.accepted']);
    expect(await env.caller.invitations.get({ id: sent.id })).toEqual(accepted);
  });

  it('accepting for an existing user (any case of the e-mail) adds only the membership', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const user = await env.caller.users.create({ email: uniqueEmail('known') });
    const sent = await env.caller.invitations.send({ email: user.email.toUpperCase(), organization_id: org.id });
    const accepted = await env.caller.invitations.accept({ id: sent.id });
    expect(accepted.accepted_user_id).toBe(user.id);
    expect((await membershipsOf(env, org.id)).map((m) => m.userId)).toEqual([user.id]);
    expect((await snapshot(env)).users).toBe(1);
  });

  it('an invitation without an organization creates the user only', async () => {
    const env = await newEnvironment();
    const sent = await env.caller.invitations.send({ email: uniqueEmail() });
    const accepted = await env.caller.invitations.accept({ id: sent.id });
    expect(accepted.state).toBe('accepted');
    const counts = await snapshot(env);
    expect([counts.users, counts.organization_memberships]).toEqual([1, 0]);
  });

  it('accepted, revoked and expired invitations refuse accept, revoke and resend with 400, storing nothing', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const accepted = await env.caller.invitations.send({ email: uniqueEmail(), organization_id: org.id });
    await env.caller.invitations.accept({ id: accepted.id });
    const revoked = await env.caller.invitations.send({ email: uniqueEmail(), organization_id: org.id });
    const revokedNow = await env.caller.invitations.revoke({ id: revoked.id });
    expect(revokedNow).toMatchObject({ state: 'revoked', revoked_at: expect.any(String) });
    const lapsing = await env.caller.invitations.send({
      email: uniqueEmail(),
      organization_id: org.id,
      expires_in_days: 1,
    });
    const later = callerWith(env, { now: () => new Date(Date.now() + DAY_MS + 60_000) });
    expect((await later.invitations.get({ id: lapsing.id })).state).toBe('expired');
    expect((await env.caller.invitations.get({ id: lapsing.id })).state).toBe('pending');

    const before = await snapshot(env);
    const cases: Array<[string, string]> = [
      [accepted.id, 'invitation_already_accepted'],
      [revoked.id, 'invitation_revoked'],
      [lapsing.id, 'invitation_expired'],
    ];
    for (const [id, code] of cases) {
      expect(await failure(later.invitations.accept({ id }))).toEqual({ status: 400, code });
      expect(await failure(later.invitations.revoke({ id }))).toEqual({ status: 400, code });
      expect(await failure(later.invitations.resend({ id }))).toEqual({ status: 400, code });
    }
    expect(await snapshot(env)).toEqual(before);
  });

  it('one pending invitation per e-mail and organization (409); a new one once it expired or was revoked', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const email = uniqueEmail();
    const first = await env.caller.invitations.send({ email, organization_id: org.id, expires_in_days: 1 });
    const before = await snapshot(env);
    expect(await failure(env.caller.invitations.send({ email: email.toUpperCase(), organization_id: org.id }))).toEqual(
      {
        status: 409,
        code: 'invitation_already_exists',
      },
    );
    expect(await snapshot(env)).toEqual(before);
    // Another organization, or none, is another invitation.
    const other = await env.caller.organizations.create({ name: 'Other' });
    await env.caller.invitations.send({ email, organization_id: other.id });
    await env.caller.invitations.send({ email });

    const later = callerWith(env, { now: () => new Date(Date.now() + 2 * DAY_MS) });
    const second = await later.invitations.send({ email, organization_id: org.id });
    expect(second.state).toBe('pending');
    expect((await later.invitations.get({ id: first.id })).state).toBe('expired');
    await later.invitations.revoke({ id: second.id });
    await later.invitations.send({ email, organization_id: org.id });
  });

  it('refuses an invitation for a user who is a member already (409)', async () => {
    const env = await newEnvironment();
    const member = await newMember(env);
    expect(
      await failure(env.caller.invitations.send({ email: member.user.email, organization_id: member.organizationId })),
    ).toEqual({ status: 409, code: 'organization_membership_already_exists' });
    expect(await stored(env)).toEqual([]);
  });

  it('an existing membership is kept when the invitee accepts', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const email = uniqueEmail();
    const sent = await env.caller.invitations.send({ email, organization_id: org.id });
    // The invitee joined some other way before accepting.
    const user = await env.caller.users.create({ email });
    const membership = await env.caller.organizationMemberships.create({ user_id: user.id, organization_id: org.id });
    const accepted = await env.caller.invitations.accept({ id: sent.id });
    expect(accepted.accepted_user_id).toBe(user.id);
    expect((await membershipsOf(env, org.id)).map((m) => m.id)).toEqual([membership.id]);
  });

  describe('bad input: status and code, nothing stored', () => {
    const foreignOrg = 'org_01HE8GSH8FQPASKSY27THRKRBP';
    const table: Array<[string, (ids: { org: string; foreign: string }) => Record<string, unknown>, number, string]> = [
      ['no e-mail', () => ({}), 422, 'invalid_request_parameters'],
      ['a malformed e-mail', () => ({ email: 'not-an-email' }), 422, 'invalid_request_parameters'],
      ['an e-mail with two @', () => ({ email: 'a@b@example.com' }), 422, 'invalid_request_parameters'],
      ['an e-mail of 400 characters', () => ({ email: `${'a'.repeat(390)}@x.com` }), 422, 'invalid_request_parameters'],
      ['expires_in_days 0', () => ({ email: uniqueEmail(), expires_in_days: 0 }), 422, 'invalid_request_parameters'],
      ['expires_in_days 31', () => ({ email: uniqueEmail(), expires_in_days: 31 }), 422, 'invalid_request_parameters'],
      [
        'expires_in_days 1.5',
        () => ({ email: uniqueEmail(), expires_in_days: 1.5 }),
        422,
        'invalid_request_parameters',
      ],
      [
        'a role without an organization',
        () => ({ email: uniqueEmail(), role_slug: 'admin' }),
        422,
        'invalid_request_parameters',
      ],
      [
        'a malformed role slug',
        ({ org }) => ({ email: uniqueEmail(), organization_id: org, role_slug: 'Admin!' }),
        422,
        'invalid_request_parameters',
      ],
      [
        'a role the organization does not have',
        ({ org }) => ({ email: uniqueEmail(), organization_id: org, role_slug: 'billing-admin' }),
        422,
        'invalid_request_parameters',
      ],
      [
        'an unknown organization',
        () => ({ email: uniqueEmail(), organization_id: foreignOrg }),
        404,
        'entity_not_found',
      ],
      [
        "another environment's organization",
        ({ foreign }) => ({ email: uniqueEmail(), organization_id: foreign }),
        404,
        'entity_not_found',
      ],
      [
        'an unknown inviter',
        ({ org }) => ({
          email: uniqueEmail(),
          organization_id: org,
          inviter_user_id: 'user_01HE8GSH8FQPASKSY27THRKRBP',
        }),
        404,
        'entity_not_found',
      ],
    ];
    it.each(table)('%s', async (_label, body, status, code) => {
      const env = await newEnvironment();
      const org = await env.caller.organizations.create({ name: 'Acme' });
      const foreign = await (await newEnvironment()).caller.organizations.create({ name: 'Theirs' });
      const before = await snapshot(env);
      const input = body({ org: org.id, foreign: foreign.id }) as Parameters<typeof env.caller.invitations.send>[0];
      expect(await failure(env.caller.invitations.send(input))).toEqual({ status, code });
      expect(await snapshot(env)).toEqual(before);
    });
  });

  describe('e-mail', () => {
    it('is sent after the commit with the accept link, and again on resend', async () => {
      const env = await newEnvironment();
      const sent: MailMessage[] = [];
      const caller = callerWith(env, {
        mailer: { send: async (message) => void sent.push(message) },
        config: { ...env.deps.config, invitationUrl: 'https://app.example.com/accept/{token}' },
      });
      const inviter = await newMember(env);
      const invitation = await caller.invitations.send({
        email: uniqueEmail('mail'),
        organization_id: inviter.organizationId,
        inviter_user_id: inviter.user.id,
      });
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ to: invitation.email, subject: "You're invited to join Acme" });
      expect(sent[0]?.text).toContain(`https://app.example.com/accept/${invitation.token}`);
      expect(sent[0]?.text).toContain(`${inviter.user.email} has invited you to join Acme.`);
      expect(sent[0]?.html).toContain(`href="https://app.example.com/accept/${invitation.token}"`);

      const resent = await caller.invitations.resend({ id: invitation.id });
      expect(resent).toEqual({ ...invitation, updated_at: expect.any(String) });
      expect(sent).toHaveLength(2);
      expect(sent[1]?.text).toEqual(sent[0]?.text);
      const names = (await storedEvents(env)).map((e) => e.event).filter((n) => n.startsWith('invitation.'));
      expect(names).toEqual(['invitation.created', 'invitation.resent']);
    });

    it('a mail server that fails leaves the invitation and its event in place', async () => {
      const env = await newEnvironment();
      const caller = callerWith(env, {
        mailer: {
          send: async () => {
            throw new Error('connect ECONNREFUSED 127.0.0.1:1');
          },
        },
      });
      const invitation = await caller.invitations.send({ email: uniqueEmail() });
      expect((await stored(env)).map((r) => r.id)).toEqual([invitation.id]);
      expect((await storedEvents(env)).map((e) => e.event)).toContain('invitation.created');
    });

    it('no mail for a refused invitation', async () => {
      const env = await newEnvironment();
      const sent: MailMessage[] = [];
      const caller = callerWith(env, { mailer: { send: async (message) => void sent.push(message) } });
      await failure(
        caller.invitations.send({ email: uniqueEmail(), organization_id: 'org_01HE8GSH8FQPASKSY27THRKRBP' }),
      );
      expect(sent).toEqual([]);
    });
  });
});
