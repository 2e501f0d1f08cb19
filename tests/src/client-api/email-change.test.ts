import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sessionChallenges, users } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { type AppRouter, consumeSharedWindow, type Deps } from '@atrium/routers';
import { createSmtpMailer } from '@atrium/server';
import { createTRPCClient, httpLink } from '@trpc/client';
import { and, eq } from 'drizzle-orm';
import { GraphQLClient } from 'graphql-request';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { startLoopbackSmtp } from '../helpers/smtp.ts';
import { getWorld, HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * "Edit email" of the official UserProfile widget (routers/src/client-api/profile/service.ts):
 * a code mailed to the current address grants elevated access; under it, a code mailed to the
 * new address changes it. The codes travel through a real SMTP conversation (nodemailer to
 * smtp-server on loopback) and are read back from the received mail, as a user would.
 */
let smtp: Awaited<ReturnType<typeof startLoopbackSmtp>>;
let server: Server;
let url: string;
/** How far this test server's clock is ahead of the real one (to outlive a code or elevated access). */
let clockOffsetMs = 0;

beforeAll(async () => {
  smtp = await startLoopbackSmtp();
  const world = await getWorld();
  const deps: Deps = {
    ...world.deps,
    now: () => new Date(Date.now() + clockOffsetMs),
    mailer: createSmtpMailer({
      url: smtp.url,
      from: 'Acme <no-reply@acme.test>',
      timeoutMs: 5_000,
    }),
  };
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  clockOffsetMs = 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await smtp.close();
});

const P = '/_widgets/UserProfile';

/**
 * A user with an operation-20 client token (a session, which keeps the codes and the elevated
 * access) on this test's server (the one that mails).
 */
async function member(env: TestEnvironment) {
  const setup = await clientSetup(env, { kind: 'client' });
  const http = new HttpClient(url, { Authorization: `Bearer ${setup.token}`, ...WIDGET_HEADERS });
  return { ...setup, http, sessionId: String(setup.claims.sid) };
}

/** The six-digit code of the last mail to `to`. */
function codeSentTo(to: string): string {
  const mail = smtp.inbox.filter((m) => m.to === to).at(-1);
  const code = mail?.text.match(/\b(\d{6})\b/)?.[1];
  if (!code) throw new Error(`no code was mailed to ${to}`);
  return code;
}

const mailsTo = (to: string) => smtp.inbox.filter((m) => m.to === to).length;
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

async function challengesOf(sessionId: string) {
  const { deps } = await getWorld();
  return deps.db.select().from(sessionChallenges).where(eq(sessionChallenges.sessionId, sessionId));
}

async function storedUser(env: TestEnvironment, id: string) {
  const { deps } = await getWorld();
  const [row] = await deps.db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, env.environmentId), eq(users.id, id)));
  return row;
}

/** Proves the current address: the elevated access token. */
async function elevate(m: Awaited<ReturnType<typeof member>>): Promise<string> {
  const sent = await m.http.post(`${P}/send-verification`);
  expect(sent.status).toBe(200);
  const verified = await m.http.post(`${P}/verify`, {
    code: codeSentTo(m.email),
    authenticationChallengeId: sent.body.authenticationChallenge,
  });
  expect(verified.status).toBe(200);
  return verified.body.elevatedAccessToken;
}

describe('UserProfile: change e-mail with codes', () => {
  it('proves the current address, mails the new one, changes it (verified, user.updated), then sets a first password', async () => {
    const env = await newEnvironment();
    const m = await member(env);

    const info = await m.http.get(`${P}/authentication-information`);
    expect(info.status).toBe(200);
    expect(info.body).toEqual({
      data: {
        verificationMethods: {
          Password: { provider: 'Password', isSetUp: false, lastUsed: null, isCurrentSession: false },
        },
        passwordSettings: {
          isPasswordNumberRequired: false,
          isPasswordPwnedRequired: false,
          isPasswordSymbolRequired: false,
          isPasswordUppercaseRequired: false,
          passwordMinimumLength: 8,
          passwordMinimumStrength: 0,
        },
      },
    });

    // The code goes to the current address; only its hash is stored.
    const sent = await m.http.post(`${P}/send-verification`);
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({
      authenticationChallenge: expect.stringMatching(/^auth_challenge_/),
      type: 'EmailVerification',
    });
    const code = codeSentTo(m.email);
    expect(smtp.inbox.filter((mail) => mail.to === m.email).at(-1)?.subject).toBe(`Your verification code: ${code}`);
    const [stored] = await challengesOf(m.sessionId);
    expect(stored).toMatchObject({ purpose: 'identity', email: m.email, attempts: 0, consumedAt: null });
    expect(JSON.stringify(stored)).not.toContain(code);

    // A wrong code is counted and answered with the tries left.
    const miss = await m.http.post(`${P}/verify`, {
      code: wrong(code),
      authenticationChallengeId: sent.body.authenticationChallenge,
    });
    expect(miss.status).toBe(400);
    expect(miss.body).toMatchObject({ code: 'invalid_code', message: 'The code is not right: 4 tries left.' });

    const verified = await m.http.post(`${P}/verify`, {
      code,
      authenticationChallengeId: sent.body.authenticationChallenge,
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ elevatedAccessToken: expect.any(String), expiresAt: expect.any(String) });
    const elevated = { 'x-elevated-access-token': verified.body.elevatedAccessToken };
    // A code is good once.
    const again = await m.http.post(`${P}/verify`, {
      code,
      authenticationChallengeId: sent.body.authenticationChallenge,
    });
    expect(again.body).toMatchObject({ code: 'code_already_used', message: 'This code was used already.' });

    // Without elevated access, nothing is sent.
    const newEmail = uniqueEmail('renamed');
    const bare = await m.http.post(`${P}/send-email-change`, { newEmail });
    expect(bare.status).toBe(403);
    expect(bare.body.code).toBe('elevated_access_required');
    expect(mailsTo(newEmail)).toBe(0);

    const change = await m.http.post(`${P}/send-email-change`, { newEmail }, elevated);
    expect(change.status).toBe(200);
    expect(change.body).toEqual({ expiresAt: expect.any(String) });
    const newCode = codeSentTo(newEmail);
    expect((await storedUser(env, m.userId))?.email).toBe(m.email);

    const missNew = await m.http.post(`${P}/verify-email-change`, { code: wrong(newCode) }, elevated);
    expect(missNew.status).toBe(400);
    expect((await storedUser(env, m.userId))?.email).toBe(m.email);

    const done = await m.http.post(`${P}/verify-email-change`, { code: newCode }, elevated);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      user: {
        id: m.userId,
        email: newEmail,
        firstName: 'Ada',
        lastName: 'Lovelace',
        locale: null,
        profilePictureUrl: null,
        oauthProfiles: null,
      },
      elevatedAccessToken: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(await storedUser(env, m.userId)).toMatchObject({ email: newEmail, emailVerified: true });
    expect((await m.http.get(`${P}/me`)).body.email).toBe(newEmail);
    const updates = await storedEventData(env, 'user.updated');
    expect(updates).toEqual([expect.objectContaining({ id: m.userId, email: newEmail, email_verified: true })]);

    // The set-password step the widget offers next, under the fresh elevated access.
    const fresh = { 'x-elevated-access-token': done.body.elevatedAccessToken };
    const weak = await m.http.post(`${P}/create-password`, { password: 'short' }, fresh);
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('password_strength_error');
    const created = await m.http.post(`${P}/create-password`, { password: 'correct horse battery' }, fresh);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true });
    expect((await storedUser(env, m.userId))?.passwordHash).toMatch(/^\$scrypt\$/);
    expect((await m.http.get(`${P}/authentication-information`)).body.data.verificationMethods.Password.isSetUp).toBe(
      true,
    );
    const twice = await m.http.post(`${P}/create-password`, { password: 'another good one' }, fresh);
    expect(twice.status).toBe(400);
    expect(twice.body.code).toBe('password_already_set');
  });

  it('refuses a taken, invalid or unchanged address before mailing anything', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const other = await clientSetup(env, { organizationId: m.organizationId });
    const token = { 'x-elevated-access-token': await elevate(m) };
    const before = smtp.inbox.length;

    const taken = await m.http.post(`${P}/send-email-change`, { newEmail: other.email.toUpperCase() }, token);
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({
      code: 'email_already_used',
      message: 'Another user already has this e-mail address.',
    });
    const invalid = await m.http.post(`${P}/send-email-change`, { newEmail: 'not an address' }, token);
    expect(invalid.status).toBe(422);
    const same = await m.http.post(`${P}/send-email-change`, { newEmail: m.email }, token);
    expect(same.status).toBe(400);
    expect(same.body.code).toBe('email_unchanged');

    expect(smtp.inbox.length).toBe(before);
    expect((await challengesOf(m.sessionId)).filter((c) => c.purpose === 'email_change')).toEqual([]);
    expect(await storedUser(env, m.userId)).toMatchObject({ email: m.email });
  });

  it("leaves a directory-provisioned user's address to the directory: 403 on REST, EmailManagedByProvider on GraphQL", async () => {
    const env = await newEnvironment();
    const org = await env.http.post('/organizations', { name: 'Directory Corp' });
    const email = uniqueEmail('synced');
    const user = await env.http.post('/user_management/users', { email, first_name: 'Ada', last_name: 'Lovelace' });
    const membership = await env.http.post('/user_management/organization_memberships', {
      user_id: user.body.id,
      organization_id: org.body.id,
      directory_managed: true,
    });
    expect(membership.status).toBe(201);
    const issued = await env.http.post('/client/token', { organization_id: org.body.id, user_id: user.body.id });
    const http = new HttpClient(url, { Authorization: `Bearer ${issued.body.token}`, ...WIDGET_HEADERS });
    const sent = await http.post(`${P}/send-verification`);
    const verified = await http.post(`${P}/verify`, {
      code: codeSentTo(email),
      authenticationChallengeId: sent.body.authenticationChallenge,
    });
    const token = { 'x-elevated-access-token': verified.body.elevatedAccessToken };
    const before = smtp.inbox.length;
    const res = await http.post(`${P}/send-email-change`, { newEmail: uniqueEmail('elsewhere') }, token);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'email_managed_by_directory',
      message: "Your e-mail address is managed by your organization's directory: change it there.",
    });
    const gql = new GraphQLClient(`${url}/client/graphql`, {
      headers: { Authorization: `Bearer ${issued.body.token}`, ...WIDGET_HEADERS },
    });
    const answer = await gql.request<any>(
      `mutation ($t: String!) { confirmEmailChange(input: { elevatedAccessToken: $t, code: "123456" }) {
        __typename ... on EmailManagedByProvider { message } } }`,
      { t: verified.body.elevatedAccessToken },
    );
    expect(answer.confirmEmailChange.__typename).toBe('EmailManagedByProvider');
    expect(smtp.inbox.length).toBe(before);
    expect(await storedUser(env, user.body.id)).toMatchObject({ email });
  });

  it('kills a code after five wrong tries, and bounds the codes a session may ask for', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const sent = await m.http.post(`${P}/send-verification`);
    const code = codeSentTo(m.email);
    const id = sent.body.authenticationChallenge;
    for (let left = 4; left >= 1; left--) {
      const res = await m.http.post(`${P}/verify`, { code: wrong(code), authenticationChallengeId: id });
      expect(res.body.message).toBe(`The code is not right: ${left} ${left === 1 ? 'try' : 'tries'} left.`);
    }
    const fifth = await m.http.post(`${P}/verify`, { code: wrong(code), authenticationChallengeId: id });
    expect(fifth.body).toMatchObject({
      code: 'too_many_attempts',
      message: 'The code was tried too often: ask for a new one.',
    });
    // Dead, even for the right code; nothing was granted.
    const right = await m.http.post(`${P}/verify`, { code, authenticationChallengeId: id });
    expect(right.status).toBe(400);
    expect(right.body.code).toBe('too_many_attempts');
    expect((await challengesOf(m.sessionId)).filter((c) => c.purpose === 'elevated_access')).toEqual([]);

    // Four more codes make five in the window; the sixth is refused and not mailed.
    for (let i = 0; i < 4; i++) expect((await m.http.post(`${P}/send-verification`)).status).toBe(200);
    const mailed = mailsTo(m.email);
    const sixth = await m.http.post(`${P}/send-verification`);
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe('too_many_verification_codes');
    expect(mailsTo(m.email)).toBe(mailed);
    // Each new code ended the one before it: one open identity challenge at most.
    const open = (await challengesOf(m.sessionId)).filter((c) => c.purpose === 'identity' && c.consumedAt === null);
    expect(open).toHaveLength(1);
  });

  it("ties elevated access to its session: another session's token, a made-up one, a revoked session are refused", async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const token = await elevate(m);
    const other = await member(env);
    const stolen = await other.http.post(
      `${P}/send-email-change`,
      { newEmail: uniqueEmail('x') },
      { 'x-elevated-access-token': token },
    );
    expect(stolen.status).toBe(403);
    expect(stolen.body.code).toBe('elevated_access_required');
    const made = await m.http.post(
      `${P}/send-email-change`,
      { newEmail: uniqueEmail('x') },
      { 'x-elevated-access-token': 'x'.repeat(43) },
    );
    expect(made.status).toBe(403);

    const revoked = await env.http.post('/user_management/sessions/revoke', { session_id: m.sessionId });
    expect(revoked.status).toBe(200);
    const after = await m.http.post(
      `${P}/send-email-change`,
      { newEmail: uniqueEmail('x') },
      { 'x-elevated-access-token': token },
    );
    expect(after.status).toBe(403);
    expect(after.body.code).toBe('invalid_client_token');
  });

  it('mails at most 5 codes per user in 10 minutes: of 20 concurrent asks on two tokens, exactly 5 are sent', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    // Another token of the same user is another session: the limit is the user's.
    const issued = await env.http.post('/widgets/token', {
      organization_id: m.organizationId,
      user_id: m.userId,
      scopes: [],
    });
    const other = new HttpClient(url, { Authorization: `Bearer ${issued.body.token}`, ...WIDGET_HEADERS });
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? m.http : other).post(`${P}/send-verification`)),
    );
    expect(all.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = all.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(15);
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('too_many_verification_codes');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(mailsTo(m.email)).toBe(5);
  });

  it('mails one new address at most 3 codes a day, whoever asks, however many at once', async () => {
    const env = await newEnvironment();
    const [a, b] = [await member(env), await member(env)];
    const [ta, tb] = [await elevate(a), await elevate(b)];
    const target = uniqueEmail('someone-else');
    const ask = (m: typeof a, token: string) =>
      m.http.post(`${P}/send-email-change`, { newEmail: target }, { 'x-elevated-access-token': token });
    const all = await Promise.all([
      ...Array.from({ length: 4 }, () => ask(a, ta)),
      ...Array.from({ length: 4 }, () => ask(b, tb)),
    ]);
    expect(all.filter((r) => r.status === 200)).toHaveLength(3);
    for (const res of all.filter((r) => r.status !== 200)) {
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('too_many_verification_codes');
    }
    expect(mailsTo(target)).toBe(3);
  });

  it('mails a user at most 10 codes to new addresses a day', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const token = { 'x-elevated-access-token': await elevate(m) };
    // Nine of the day's ten are spent (as if asked for over the day).
    const { deps } = await getWorld();
    await consumeSharedWindow(deps, `account-email-changes:${m.userId}`, 9, 24 * 60 * MINUTES);
    const tenth = uniqueEmail('tenth');
    expect((await m.http.post(`${P}/send-email-change`, { newEmail: tenth }, token)).status).toBe(200);
    const eleventh = uniqueEmail('eleventh');
    const refused = await m.http.post(`${P}/send-email-change`, { newEmail: eleventh }, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'too_many_verification_codes',
      message: 'At most 10 codes to a new address are sent in a day; try again tomorrow.',
    });
    expect([mailsTo(tenth), mailsTo(eleventh)]).toEqual([1, 0]);
  });

  it('keeps no code the mail server refuses', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    smtp.refusedForGood.add(m.email);
    const res = await m.http.post(`${P}/send-verification`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'email_not_deliverable' });
    expect(await challengesOf(m.sessionId)).toEqual([]);
  });

  it("a widget token (no session) changes the e-mail too: its codes and elevated access are its user's, held outside any session", async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const issued = await env.http.post('/widgets/token', { organization_id: m.organizationId, user_id: m.userId });
    const widget = new HttpClient(url, { Authorization: `Bearer ${issued.body.token}`, ...WIDGET_HEADERS });
    const sent = await widget.post(`${P}/send-verification`);
    expect(sent.status).toBe(200);
    const { deps } = await getWorld();
    const stored = await deps.db
      .select()
      .from(sessionChallenges)
      .where(eq(sessionChallenges.environmentId, env.environmentId));
    expect(stored).toEqual([
      expect.objectContaining({ userId: m.userId, sessionId: null, purpose: 'identity', email: m.email }),
    ]);
    const verified = await widget.post(`${P}/verify`, {
      code: codeSentTo(m.email),
      authenticationChallengeId: sent.body.authenticationChallenge,
    });
    expect(verified.status).toBe(200);
    const elevated = verified.body.elevatedAccessToken as string;
    const to = uniqueEmail('widget-new');
    // The elevated access is the widget's user's, not the operation-20 session's: that session cannot use it.
    const fromSession = await m.http.post(
      `${P}/send-email-change`,
      { newEmail: to },
      { 'x-elevated-access-token': elevated },
    );
    expect(fromSession.status).toBe(403);
    expect(mailsTo(to)).toBe(0);
    const change = await widget.post(
      `${P}/send-email-change`,
      { newEmail: to },
      { 'x-elevated-access-token': elevated },
    );
    expect(change.status).toBe(200);
    const done = await widget.post(
      `${P}/verify-email-change`,
      { code: codeSentTo(to) },
      { 'x-elevated-access-token': elevated },
    );
    expect(done.status).toBe(200);
    expect(await storedUser(env, m.userId)).toMatchObject({ email: to, emailVerified: true });
  });

  it('without a mail server: 400, nothing stored', async () => {
    const env = await newEnvironment();
    const m = await clientSetup(env, { kind: 'client' });
    const res = await m.http.post(`${P}/send-verification`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'email_not_configured',
      message: 'This server sends no e-mail (SMTP_URL is not set), so it cannot send a verification code.',
    });
    expect(await challengesOf(String(m.claims.sid))).toEqual([]);
  });
});

const MINUTES = 60_000;

describe('the same flow on /client/graphql (graphql-request) and typed tRPC', () => {
  async function onSurfaces(env: TestEnvironment) {
    const m = await member(env);
    const headers = { Authorization: `Bearer ${m.token}`, ...WIDGET_HEADERS };
    const gql = new GraphQLClient(`${url}/client/graphql`, { headers });
    const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers })] });
    return { ...m, gql, trpc };
  }

  it('answers every step as the declared union variants, refusals included', async () => {
    const env = await newEnvironment();
    const m = await onSurfaces(env);
    const other = await clientSetup(env, { organizationId: m.organizationId });

    const sent = await m.gql.request<any>(`mutation { sendVerificationCode {
      __typename ... on VerificationCodeSent { authenticationChallengeId expiresAt } ... on DailyEmailQuotaExceeded { message } } }`);
    expect(sent.sendVerificationCode).toEqual({
      __typename: 'VerificationCodeSent',
      authenticationChallengeId: expect.stringMatching(/^auth_challenge_/),
      expiresAt: expect.any(String),
    });
    const code = codeSentTo(m.email);
    const VERIFY = `mutation ($id: ID!, $code: String!) { verifyCurrentEmail(input: { authenticationChallengeId: $id, code: $code }) {
      __typename ... on CurrentEmailVerified { elevatedAccessToken expiresAt }
      ... on VerificationCodeIncorrect { message } ... on VerificationCodePreviouslyUsed { message }
      ... on VerificationCodeExpired { message } ... on VerificationTooManyAttempts { message } } }`;
    const id = sent.sendVerificationCode.authenticationChallengeId;
    expect((await m.gql.request<any>(VERIFY, { id, code: wrong(code) })).verifyCurrentEmail).toEqual({
      __typename: 'VerificationCodeIncorrect',
      message: 'The code is not right: 4 tries left.',
    });
    const verified = (await m.gql.request<any>(VERIFY, { id, code })).verifyCurrentEmail;
    expect(verified).toEqual({
      __typename: 'CurrentEmailVerified',
      elevatedAccessToken: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect((await m.gql.request<any>(VERIFY, { id, code })).verifyCurrentEmail.__typename).toBe(
      'VerificationCodePreviouslyUsed',
    );
    const token = verified.elevatedAccessToken;

    const SEND = `mutation ($token: String!, $email: String!) { sendEmailChange(input: { elevatedAccessToken: $token, newEmail: $email }) {
      __typename ... on EmailChangeSent { expiresAt } ... on EmailNotAvailable { message } ... on InvalidEmail { message }
      ... on IdentityVerificationInvalid { message } ... on IdentityVerificationExpired { message } } }`;
    const send = async (t: string, email: string) =>
      (await m.gql.request<any>(SEND, { token: t, email })).sendEmailChange;
    expect((await send('made-up', uniqueEmail('x'))).__typename).toBe('IdentityVerificationInvalid');
    expect(await send(token, other.email)).toEqual({
      __typename: 'EmailNotAvailable',
      message: 'Another user already has this e-mail address.',
    });
    expect((await send(token, 'nope')).__typename).toBe('InvalidEmail');
    const newEmail = uniqueEmail('gql');
    expect(await send(token, newEmail)).toEqual({ __typename: 'EmailChangeSent', expiresAt: expect.any(String) });

    const CONFIRM = `mutation ($token: String!, $code: String!) { confirmEmailChange(input: { elevatedAccessToken: $token, code: $code }) {
      __typename ... on EmailChangeConfirmed { elevatedAccessToken user { id email emailVerified passwordSet } }
      ... on EmailChangeCodeIncorrect { message } ... on EmailChangeCodePreviouslyUsed { message } } }`;
    const newCode = codeSentTo(newEmail);
    const confirm = async (c: string) => (await m.gql.request<any>(CONFIRM, { token, code: c })).confirmEmailChange;
    expect((await confirm(wrong(newCode))).__typename).toBe('EmailChangeCodeIncorrect');
    const confirmed = await confirm(newCode);
    expect(confirmed).toEqual({
      __typename: 'EmailChangeConfirmed',
      elevatedAccessToken: expect.any(String),
      user: { id: m.userId, email: newEmail, emailVerified: true, passwordSet: false },
    });
    expect((await confirm(newCode)).__typename).toBe('EmailChangeCodePreviouslyUsed');
    expect(await storedUser(env, m.userId)).toMatchObject({ email: newEmail, emailVerified: true });

    const CREATE = `mutation ($token: String!, $password: String!) { createPassword(input: { elevatedAccessToken: $token, password: $password }) {
      __typename ... on PasswordCreated { success } ... on UserAlreadyHasPassword { _placeholder }
      ... on ElevatedAccessTokenInvalid { message }
      ... on PasswordPolicyViolation { code message violations { code message minimumLength maximumLength } } } }`;
    const create = async (t: string, password: string) =>
      (await m.gql.request<any>(CREATE, { token: t, password })).createPassword;
    const fresh = confirmed.elevatedAccessToken;
    expect((await create('made-up', 'correct horse battery')).__typename).toBe('ElevatedAccessTokenInvalid');
    expect(await create(fresh, 'short')).toEqual({
      __typename: 'PasswordPolicyViolation',
      code: 'password_too_short',
      message: 'A password needs at least 8 characters.',
      violations: [
        {
          code: 'password_too_short',
          message: 'A password needs at least 8 characters.',
          minimumLength: 8,
          maximumLength: null,
        },
      ],
    });
    expect(await create(fresh, 'correct horse battery')).toEqual({ __typename: 'PasswordCreated', success: true });
    expect(await create(fresh, 'another good one')).toEqual({
      __typename: 'UserAlreadyHasPassword',
      _placeholder: true,
    });
  });

  it('outlived: a code past its 10 minutes and elevated access past its 10 minutes are refused as expired', async () => {
    const env = await newEnvironment();
    // Two users: one holds a code, the other elevated access; then eleven minutes pass (the widget
    // tokens, good for fifteen, still are).
    const a = await onSurfaces(env);
    const sent = await a.trpc.client.account.sendVerificationCode.mutate();
    if (sent.__typename !== 'VerificationCodeSent') throw new Error(sent.__typename);
    const code = codeSentTo(a.email);
    const b = await onSurfaces(env);
    const bSent = await b.trpc.client.account.sendVerificationCode.mutate();
    if (bSent.__typename !== 'VerificationCodeSent') throw new Error(bSent.__typename);
    const verified = await b.trpc.client.account.verifyCurrentEmail.mutate({
      authenticationChallengeId: bSent.authenticationChallengeId,
      code: codeSentTo(b.email),
    });
    if (verified.__typename !== 'CurrentEmailVerified') throw new Error(verified.__typename);
    clockOffsetMs = 11 * MINUTES;

    expect(
      await a.trpc.client.account.verifyCurrentEmail.mutate({
        authenticationChallengeId: sent.authenticationChallengeId,
        code,
      }),
    ).toEqual({ __typename: 'VerificationCodeExpired', message: 'The code has expired: ask for a new one.' });
    const elevatedAccessToken = verified.elevatedAccessToken;
    expect(
      await b.trpc.client.account.sendEmailChange.mutate({ elevatedAccessToken, newEmail: uniqueEmail('late') }),
    ).toEqual({
      __typename: 'IdentityVerificationExpired',
      message: 'Your verification has expired: verify your identity again.',
    });
    expect(
      await b.trpc.client.account.createPassword.mutate({ elevatedAccessToken, password: 'correct horse battery' }),
    ).toMatchObject({ __typename: 'ElevatedAccessTokenExpired' });
    // Over REST, the same refusal is a 403 the widget shows; nothing was mailed or stored.
    const rest = await b.http.post(
      `${P}/send-email-change`,
      { newEmail: uniqueEmail('late') },
      { 'x-elevated-access-token': elevatedAccessToken },
    );
    expect(rest.status).toBe(403);
    expect(rest.body).toMatchObject({
      code: 'elevated_access_required',
      message: 'Your verification has expired: verify your identity again.',
    });
    expect((await challengesOf(b.sessionId)).filter((c) => c.purpose === 'email_change')).toEqual([]);
    expect((await storedUser(env, b.userId))?.passwordHash).toBeNull();
  });

  it('typed tRPC changes the address too, and without a code sent there is no pending change', async () => {
    const env = await newEnvironment();
    const m = await onSurfaces(env);
    const sent = await m.trpc.client.account.sendVerificationCode.mutate();
    if (sent.__typename !== 'VerificationCodeSent') throw new Error(sent.__typename);
    const verified = await m.trpc.client.account.verifyCurrentEmail.mutate({
      authenticationChallengeId: sent.authenticationChallengeId,
      code: codeSentTo(m.email),
    });
    if (verified.__typename !== 'CurrentEmailVerified') throw new Error(verified.__typename);
    const token = verified.elevatedAccessToken;
    expect(
      await m.trpc.client.account.confirmEmailChange.mutate({ elevatedAccessToken: token, code: '000000' }),
    ).toEqual({
      __typename: 'NoPendingEmailChange',
      message: 'No code was sent to a new address: ask for one first.',
    });
    const newEmail = uniqueEmail('trpc');
    expect(await m.trpc.client.account.sendEmailChange.mutate({ elevatedAccessToken: token, newEmail })).toMatchObject({
      __typename: 'EmailChangeSent',
    });
    const confirmed = await m.trpc.client.account.confirmEmailChange.mutate({
      elevatedAccessToken: token,
      code: codeSentTo(newEmail),
    });
    expect(confirmed).toMatchObject({
      __typename: 'EmailChangeConfirmed',
      user: { id: m.userId, email: newEmail, emailVerified: true },
    });
    expect((await storedUser(env, m.userId))?.email).toBe(newEmail);
  });
});
