import { sessionChallenges, users } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientFor, trpcFor } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * "Change password" of the official UserSecurity widget (routers/src/client-api/account/): the
 * current password must match, the new one must meet the policy and differ; on REST, GraphQL and
 * typed tRPC, with the same service.
 */

const P = '/_widgets/UserProfile';
const CURRENT = 'correct horse battery';

/** A user with `password` (or none), a member of a new organization, and an operation-20 client token. */
async function withPassword(env: TestEnvironment, password: string | undefined) {
  const org = await env.http.post('/organizations', { name: 'Security Corp' });
  const email = uniqueEmail('secure');
  const user = await env.http.post('/user_management/users', {
    email,
    first_name: 'Ada',
    last_name: 'Lovelace',
    ...(password ? { password } : {}),
  });
  expect(user.status).toBe(201);
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: user.body.id,
    organization_id: org.body.id,
  });
  expect(membership.status).toBe(201);
  // An operation-20 client token: a session, which keeps the count of wrong passwords.
  const issued = await env.http.post('/client/token', { organization_id: org.body.id, user_id: user.body.id });
  const token: string = issued.body.token;
  return {
    userId: user.body.id as string,
    organizationId: org.body.id as string,
    token,
    ...clientFor(env, token),
    trpc: trpcFor(env, token),
  };
}

async function storedHash(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db
    .select({ hash: users.passwordHash })
    .from(users)
    .where(and(eq(users.environmentId, env.environmentId), eq(users.id, id)));
  return row?.hash ?? null;
}

describe('UserSecurity: change password', () => {
  it('REST: a wrong current password is "Invalid credentials", a short or reused one a policy error; then it changes', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    const info = await u.http.get(`${P}/authentication-information`);
    expect(info.body.data.verificationMethods.Password).toMatchObject({ isSetUp: true });
    const before = await storedHash(env, u.userId);

    const wrong = await u.http.post(`${P}/update-password`, {
      currentPassword: 'not it',
      newPassword: 'a brand new one',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ code: 'invalid_credentials', message: 'Invalid credentials' });
    const short = await u.http.post(`${P}/update-password`, { currentPassword: CURRENT, newPassword: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({
      code: 'password_strength_error',
      message: 'A password needs at least 8 characters.',
      errors: [
        {
          field: 'password',
          code: 'password_too_short',
          message: 'A password needs at least 8 characters.',
          minimum_length: 8,
        },
      ],
    });
    const reused = await u.http.post(`${P}/update-password`, { currentPassword: CURRENT, newPassword: CURRENT });
    expect(reused.body.errors).toEqual([expect.objectContaining({ code: 'password_reused' })]);
    expect(await storedHash(env, u.userId)).toBe(before);
    expect(await storedEventData(env, 'user.updated')).toEqual([]);

    const changed = await u.http.post(`${P}/update-password`, {
      currentPassword: CURRENT,
      newPassword: 'a brand new one',
    });
    expect(changed.status).toBe(201);
    expect(changed.body).toEqual({ success: true });
    const after = await storedHash(env, u.userId);
    expect(after).toMatch(/^\$scrypt\$/);
    expect(after).not.toBe(before);
    expect(await storedEventData(env, 'user.updated')).toHaveLength(1);
    // The old password no longer matches; the new one does.
    expect(
      (await u.http.post(`${P}/update-password`, { currentPassword: CURRENT, newPassword: 'x'.repeat(9) })).body.code,
    ).toBe('invalid_credentials');
    expect(
      (await u.http.post(`${P}/update-password`, { currentPassword: 'a brand new one', newPassword: CURRENT })).status,
    ).toBe(201);
  });

  it('a user with no password has nothing to change: IncorrectPassword, nothing stored', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, undefined);
    const res = await u.http.post(`${P}/update-password`, { currentPassword: '', newPassword: 'a brand new one' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Invalid credentials');
    expect(await storedHash(env, u.userId)).toBeNull();
  });

  it('a widget token, bound to no session, changes nothing and stores nothing under a session', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    const [membership] = (await env.http.get(`/user_management/organization_memberships?user_id=${u.userId}`)).body
      .data;
    const issued = await env.http.post('/widgets/token', {
      organization_id: membership.organization_id,
      user_id: u.userId,
    });
    const widget = clientFor(env, issued.body.token);
    const before = await storedHash(env, u.userId);
    const challenges = async () =>
      (await env.deps.db.select().from(sessionChallenges).where(eq(sessionChallenges.environmentId, env.environmentId)))
        .length;
    // 400 either way: `session_token_required` while the wrong-password count is kept under a
    // session, `invalid_credentials` once it is kept per user (issue #34, item 7).
    const res = await widget.http.post(`${P}/update-password`, { currentPassword: 'wrong', newPassword: 'brand new' });
    expect(res.status).toBe(400);
    expect(await storedHash(env, u.userId)).toBe(before);
    expect(await challenges()).toBe(0);
    // What needs no session still works with it.
    expect((await widget.http.get(`${P}/authentication-information`)).status).toBe(200);
  });

  it('bounds guessing: after five wrong current passwords in ten minutes even the right one waits (429)', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    const before = await storedHash(env, u.userId);
    for (let i = 0; i < 5; i++) {
      const res = await u.http.post(`${P}/update-password`, {
        currentPassword: `guess ${i}`,
        newPassword: 'a brand new one',
      });
      expect(res.body.code).toBe('invalid_credentials');
    }
    const right = await u.http.post(`${P}/update-password`, {
      currentPassword: CURRENT,
      newPassword: 'a brand new one',
    });
    expect(right.status).toBe(429);
    expect(right.body).toEqual({
      code: 'too_many_password_attempts',
      message: 'At most 5 wrong passwords are checked in 10 minutes; try again later.',
    });
    expect(await storedHash(env, u.userId)).toBe(before);
  });

  it('counts a guess before checking it, per user: 40 concurrent wrong guesses on two tokens run 5 checks', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    const before = await storedHash(env, u.userId);
    // Each token is a new session; the limit holds for the user whatever the token.
    const another = await env.http.post('/widgets/token', {
      organization_id: u.organizationId,
      user_id: u.userId,
      scopes: [],
    });
    const second = clientFor(env, another.body.token);
    const guess = (i: number) =>
      (i % 2 === 0 ? u : second).http.post(`${P}/update-password`, {
        currentPassword: `guess ${i}`,
        newPassword: 'a brand new one',
      });
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => guess(i)));
    // Only an admitted guess reaches scrypt: the number of checks is the number of 400s.
    expect(all.filter((r) => r.status === 400 && r.body.code === 'invalid_credentials')).toHaveLength(5);
    const limited = all.filter((r) => r.status === 429);
    expect(limited).toHaveLength(35);
    for (const res of limited) {
      expect(res.body.code).toBe('too_many_password_attempts');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const right = await second.http.post(`${P}/update-password`, {
      currentPassword: CURRENT,
      newPassword: 'x'.repeat(9),
    });
    expect(right.status).toBe(429);
    expect(await storedHash(env, u.userId)).toBe(before);
  });

  it('a right current password is given back: one after another, they never use up the guesses', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    for (let i = 0; i < 8; i++) {
      const res = await u.http.post(`${P}/update-password`, { currentPassword: CURRENT, newPassword: 'short' });
      expect(res.body.code).toBe('password_strength_error');
    }
    for (let i = 0; i < 5; i++) {
      const res = await u.http.post(`${P}/update-password`, {
        currentPassword: `guess ${i}`,
        newPassword: 'long enough',
      });
      expect(res.body.code).toBe('invalid_credentials');
    }
  });

  it('GraphQL and typed tRPC answer the declared variants', async () => {
    const env = await newEnvironment();
    const u = await withPassword(env, CURRENT);
    const UPDATE = `mutation ($c: String!, $n: String!) { updatePassword(input: { currentPassword: $c, newPassword: $n }) {
      __typename ... on PasswordUpdated { success } ... on IncorrectPassword { _placeholder }
      ... on PasswordPolicyViolation { code message violations { code minimumLength } } } }`;
    const update = async (c: string, n: string) => (await u.graphql(UPDATE, { c, n })).body.data.updatePassword;
    expect(await update('nope', 'a brand new one')).toEqual({ __typename: 'IncorrectPassword', _placeholder: true });
    expect(await update(CURRENT, 'short')).toEqual({
      __typename: 'PasswordPolicyViolation',
      code: 'password_too_short',
      message: 'A password needs at least 8 characters.',
      violations: [{ code: 'password_too_short', minimumLength: 8 }],
    });
    expect(await update(CURRENT, 'a brand new one')).toEqual({ __typename: 'PasswordUpdated', success: true });
    expect(
      await u.trpc.client.account.updatePassword.mutate({ currentPassword: CURRENT, newPassword: 'third one!' }),
    ).toEqual({
      __typename: 'IncorrectPassword',
      _placeholder: true,
    });
    expect(
      await u.trpc.client.account.updatePassword.mutate({
        currentPassword: 'a brand new one',
        newPassword: 'third one!',
      }),
    ).toEqual({ __typename: 'PasswordUpdated', success: true });
  });
});
