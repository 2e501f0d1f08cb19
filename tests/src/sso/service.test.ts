import { randomUUID } from 'node:crypto';
import {
  connections,
  membershipRoles,
  organizationMemberships,
  ssoAuthorizations,
  ssoCodes,
  ssoProfiles,
  users,
} from '@atrium/db';
import { completeSignIn, failSignIn, SsoFailure } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEventData, storedEvents } from '../helpers/events.ts';
import { statementsOf } from '../helpers/statements.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { APP_CALLBACK, identity, registerRedirectUri, ssoSetup, startedAuthorization } from './sign-in.ts';

const usersOf = (env: TestEnvironment) =>
  env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
const authorizationRow = async (env: TestEnvironment, id: string) =>
  (await env.deps.db.select().from(ssoAuthorizations).where(eq(ssoAuthorizations.id, id)))[0];

// The worker's migrated database is built once, not in a test's time.
beforeAll(async () => {
  await newEnvironment();
}, 120_000);

describe('completeSignIn (Just-in-time)', () => {
  it('provisions a verified user, an active membership and a profile, issues a code, activates the connection', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection, scope } = await ssoSetup(env);
    const authorizationId = await startedAuthorization(env, connection, { appState: 'app-state-1' });
    const email = `ada@${domain}`;

    const { redirectUrl } = await completeSignIn(scope, connection, authorizationId, identity(email));

    const url = new URL(redirectUrl);
    expect(`${url.origin}${url.pathname}`).toBe(APP_CALLBACK);
    expect(url.searchParams.get('state')).toBe('app-state-1');
    const code = url.searchParams.get('code') ?? '';
    expect(code).toMatch(/^[0-9A-Za-z]{43}$/);

    const [user] = await usersOf(env);
    expect(user).toMatchObject({ email, emailVerified: true, firstName: 'Ada', lastName: 'Lovelace' });
    expect(user?.lastSignInAt).toBeInstanceOf(Date);
    const memberships = await env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.userId, user?.id ?? ''));
    expect(memberships).toEqual([expect.objectContaining({ organizationId: organization.id, status: 'active' })]);
    const profiles = await env.deps.db.select().from(ssoProfiles).where(eq(ssoProfiles.connectionId, connection.id));
    expect(profiles).toEqual([
      expect.objectContaining({
        userId: user?.id,
        idpId: `idp-${email}`,
        organizationId: organization.id,
        groups: ['engineering'],
      }),
    ]);
    const codes = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    expect(codes).toHaveLength(1);
    expect(codes[0]?.codeHash).not.toContain(code);
    expect(codes[0]?.expiresAt.getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    const [after] = await env.deps.db.select().from(connections).where(eq(connections.id, connection.id));
    expect(after?.state).toBe('active');
    expect(after?.lastSignInAt).toBeInstanceOf(Date);
    expect(await authorizationRow(env, authorizationId)).toMatchObject({ state: 'successful' });

    const names = (await storedEvents(env)).map((e) => e.event);
    expect(names).toEqual(
      expect.arrayContaining([
        'user.created',
        'organization_membership.created',
        'connection.activated',
        'authentication.sso_succeeded',
      ]),
    );
    expect(await storedEventData(env, 'authentication.sso_succeeded')).toEqual([
      {
        type: 'sso',
        status: 'succeeded',
        ip_address: null,
        user_agent: null,
        user_id: user?.id,
        email,
        sso: { organization_id: organization.id, connection_id: connection.id, session_id: null },
      },
    ]);
  });

  // Issue #37: a first sign-in's membership is made for the sign-in (the user it created needs no
  // lock, no quota count and no role delete; the membership, its default role and the event's fields in one statement).
  it("gives a first sign-in's membership the default role, in its event too, in 12 statements", async () => {
    const env = await newEnvironment();
    const { domain, organization, connection, scope } = await ssoSetup(env);
    const authorizationId = await startedAuthorization(env, connection);
    const email = `noether@${domain}`;

    const { statements } = await statementsOf(env.deps.db, () =>
      completeSignIn(scope, connection, authorizationId, identity(email)),
    );

    const [user] = await usersOf(env);
    const [membership] = await env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.userId, user?.id ?? ''));
    const roles = await env.deps.db
      .select()
      .from(membershipRoles)
      .where(eq(membershipRoles.organizationMembershipId, membership?.id ?? ''));
    expect(roles).toEqual([expect.objectContaining({ position: 0 })]);
    expect(await storedEventData(env, 'organization_membership.created')).toEqual([
      expect.objectContaining({
        id: membership?.id,
        user_id: user?.id,
        organization_id: organization.id,
        organization_name: 'Acme',
        status: 'active',
        directory_managed: false,
        role: { slug: 'member' },
        roles: [{ slug: 'member' }],
      }),
    ]);
    // PGlite sends every statement through the handle, a transaction's included; PostgreSQL runs
    // the transaction on its own pool, which statementsOf does not see.
    if (env.deps.driver === 'pglite') {
      const inside = statements.filter((text) => !/^(BEGIN|COMMIT)/i.test(text));
      // 14 before h2-acs: the authorization's read FOR UPDATE and its finish are one UPDATE, and
      // a user created here is inserted signed in (no second UPDATE).
      expect(inside, inside.join('\n')).toHaveLength(12);
    }
  });

  it('gives an existing user without a membership one with the default role at sign-in', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection, scope } = await ssoSetup(env);
    const email = `hopper@${domain}`;
    const created = await env.caller.users.create({ email });
    const authorizationId = await startedAuthorization(env, connection);

    await completeSignIn(scope, connection, authorizationId, identity(email));

    expect(await usersOf(env)).toHaveLength(1);
    const memberships = await env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.userId, created.id));
    expect(memberships).toEqual([expect.objectContaining({ organizationId: organization.id, status: 'active' })]);
    expect(await storedEventData(env, 'organization_membership.created')).toEqual([
      expect.objectContaining({ user_id: created.id, roles: [{ slug: 'member' }] }),
    ]);
    expect(await storedEventData(env, 'user.created')).toHaveLength(1);
  });

  it('matches the same person again by profile, then by e-mail; a second completion of one authorization is refused', async () => {
    const env = await newEnvironment();
    const { domain, connection, scope } = await ssoSetup(env);
    const email = `grace@${domain}`;
    const first = await startedAuthorization(env, connection);
    await completeSignIn(scope, connection, first, identity(email));
    await expect(completeSignIn(scope, connection, first, identity(email))).rejects.toMatchObject({
      name: 'SsoFailure',
      reason: 'authorization_already_used',
    });
    const second = await startedAuthorization(env, connection);
    await completeSignIn(scope, connection, second, identity(email.toUpperCase(), { idpId: 'another-idp-id' }));
    expect(await usersOf(env)).toHaveLength(1);
    expect(await storedEventData(env, 'user.created')).toHaveLength(1);
    expect(await storedEventData(env, 'connection.activated')).toHaveLength(1);
    expect(await storedEventData(env, 'organization_membership.created')).toHaveLength(1);
  });

  // Issue #37's bench: concurrent sign-ins through one connection deadlocked on PostgreSQL (each
  // had inserted rows referencing the connection, a KEY SHARE lock, before reading it FOR UPDATE),
  // and all but one answered 409 after the 1 s deadlock timeout.
  it('signs in several people at once through one connection: every one succeeds, the connection activates once', async () => {
    const env = await newEnvironment();
    const { domain, connection, scope } = await ssoSetup(env);
    const people = Array.from({ length: 6 }, (_, i) => `parallel${i}@${domain}`);
    const authorizations = await Promise.all(people.map(() => startedAuthorization(env, connection)));

    const results = await Promise.allSettled(
      people.map((email, i) => completeSignIn(scope, connection, authorizations[i] ?? '', identity(email))),
    );

    expect(results.map((r) => r.status)).toEqual(people.map(() => 'fulfilled'));
    const codes = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    expect(codes).toHaveLength(people.length);
    expect((await usersOf(env)).map((u) => u.email).sort()).toEqual([...people].sort());
    for (const id of authorizations) expect(await authorizationRow(env, id)).toMatchObject({ state: 'successful' });
    expect(await storedEventData(env, 'connection.activated')).toHaveLength(1);
    expect(await storedEventData(env, 'authentication.sso_succeeded')).toHaveLength(people.length);
    const [after] = await env.deps.db.select().from(connections).where(eq(connections.id, connection.id));
    expect(after).toMatchObject({ state: 'active', lastSignInAt: expect.any(Date) });
  });

  it('refuses an address outside the verified domains when the organization allows none, storing nothing', async () => {
    const env = await newEnvironment();
    const { connection, scope } = await ssoSetup(env);
    const authorizationId = await startedAuthorization(env, connection);
    await expect(
      completeSignIn(scope, connection, authorizationId, identity('mallory@elsewhere.example')),
    ).rejects.toMatchObject({
      reason: 'domain_not_allowed',
    });
    expect(await usersOf(env)).toHaveLength(0);
    expect(await authorizationRow(env, authorizationId)).toMatchObject({ state: 'started' });
    expect(await storedEventData(env, 'authentication.sso_succeeded')).toHaveLength(0);
  });

  it('provisions an unverified user outside the domains when the organization allows it', async () => {
    const env = await newEnvironment();
    const { connection, scope } = await ssoSetup(env, { verified: false, allowOutside: true });
    const authorizationId = await startedAuthorization(env, connection);
    await completeSignIn(scope, connection, authorizationId, identity('guest@partner.example'));
    expect(await usersOf(env)).toEqual([
      expect.objectContaining({ email: 'guest@partner.example', emailVerified: false }),
    ]);
  });

  it('refuses an expired authorization and one of another connection', async () => {
    const env = await newEnvironment();
    const { domain, connection, scope } = await ssoSetup(env);
    const other = await ssoSetup(env);
    const expired = await startedAuthorization(env, connection, { expiresAt: new Date(Date.now() - 1000) });
    await expect(completeSignIn(scope, connection, expired, identity(`a@${domain}`))).rejects.toMatchObject({
      reason: 'authorization_expired',
    });
    const foreign = await startedAuthorization(env, other.connection);
    await expect(completeSignIn(scope, connection, foreign, identity(`a@${domain}`))).rejects.toMatchObject({
      reason: 'unknown_authorization',
    });
    expect(await usersOf(env)).toHaveLength(0);
  });

  it('IdP-initiated (no authorization) lands on the default redirect URI, and is refused without one', async () => {
    const env = await newEnvironment();
    const { domain, connection, scope } = await ssoSetup(env);
    await expect(completeSignIn(scope, connection, null, identity(`a@${domain}`))).rejects.toMatchObject({
      reason: 'no_default_redirect_uri',
    });
    await registerRedirectUri(env, 'https://app.example.com/sso', true);
    const { redirectUrl } = await completeSignIn(scope, connection, null, identity(`a@${domain}`));
    expect(redirectUrl).toMatch(/^https:\/\/app\.example\.com\/sso\?code=[0-9A-Za-z]{43}$/);
  });

  it('an answer whose sign-in failed on a database error is not spent: sent again it signs in, once, then is a replay', async () => {
    const env = await newEnvironment();
    const { domain, connection, scope } = await ssoSetup(env);
    const authorizationId = await startedAuthorization(env, connection);
    const answer = identity(`a@${domain}`, {
      use: { assertionId: `_${randomUUID()}`, expiresAt: new Date(Date.now() + 10 * 60 * 1000) },
    });
    // The sign-in's transaction fails at its end, as when the connection drops before the commit.
    const lost = new Proxy(scope.db, {
      get(target, key, receiver) {
        if (key !== 'transaction') return Reflect.get(target, key, receiver);
        return (fn: (tx: unknown) => Promise<unknown>) =>
          target.transaction(async (tx) => {
            await fn(tx);
            throw new Error('connection lost before commit');
          });
      },
    });
    await expect(completeSignIn({ ...scope, db: lost }, connection, authorizationId, answer)).rejects.toThrow(
      'connection lost before commit',
    );
    // Nothing of it stayed, the assertion's use neither: no sign-in was granted with it yet.
    expect(await authorizationRow(env, authorizationId)).toMatchObject({ state: 'started' });
    expect(await usersOf(env)).toEqual([]);
    const { redirectUrl } = await completeSignIn(scope, connection, authorizationId, answer);
    expect(redirectUrl).toMatch(/[?&]code=[0-9A-Za-z]{43}/);
    await expect(completeSignIn(scope, connection, authorizationId, answer)).rejects.toMatchObject({
      reason: 'replayed_assertion',
    });
    expect(await usersOf(env)).toHaveLength(1);
  });
});

describe('failSignIn', () => {
  it('marks the authorization failed, records the reason and redirects to the app with the error', async () => {
    const env = await newEnvironment();
    const { organization, connection, scope } = await ssoSetup(env);
    const authorizationId = await startedAuthorization(env, connection, { appState: 's1' });
    const failure = new SsoFailure('replayed_assertion', 'The assertion was already used.');
    const { redirectUrl } = await failSignIn(scope, connection, authorizationId, failure);
    const url = new URL(redirectUrl ?? '');
    expect(url.searchParams.get('error')).toBe('replayed_assertion');
    expect(url.searchParams.get('error_description')).toBe('The assertion was already used.');
    expect(url.searchParams.get('state')).toBe('s1');
    expect(await authorizationRow(env, authorizationId)).toMatchObject({
      state: 'failed',
      failureReason: 'replayed_assertion',
    });
    expect(await storedEventData(env, 'authentication.sso_failed')).toEqual([
      {
        type: 'sso',
        status: 'failed',
        ip_address: null,
        user_agent: null,
        user_id: null,
        email: null,
        sso: { organization_id: organization.id, connection_id: connection.id, session_id: null },
        error: { code: 'replayed_assertion', message: 'The assertion was already used.' },
      },
    ]);
    // A completed authorization is not turned into a failure afterwards.
    const done = await startedAuthorization(env, connection);
    await failSignIn(scope, connection, done, failure);
    const again = await failSignIn(scope, connection, null, failure);
    expect(again).toEqual({});
    const rows = await env.deps.db
      .select()
      .from(ssoAuthorizations)
      .where(and(eq(ssoAuthorizations.environmentId, env.environmentId), eq(ssoAuthorizations.state, 'failed')));
    expect(rows).toHaveLength(2);
  });
});
