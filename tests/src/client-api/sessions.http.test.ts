import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { clientFor, clientSetup } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { anotherToken, graphqlRequestFor, portalCaller, trpcFor } from './self-helpers.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * A user with two sessions (a, b) in one organization, and another user (c) of the same
 * organization: operation-20 client tokens, each a session (a widget token is none).
 */
async function world(env: TestEnvironment) {
  const a = await clientSetup(env, { kind: 'client' });
  const bToken = await anotherToken(env, a.organizationId, a.userId);
  const c = await clientSetup(env, { organizationId: a.organizationId, kind: 'client' });
  const sid = (token: string) => JSON.parse(atob(token.split('.')[1] as string)).sid as string;
  return { a, bToken, bSid: sid(bToken), c, aSid: String(a.claims.sid), cSid: String(c.claims.sid) };
}

/** The statuses of a user's stored sessions by id, through the API-key surface. */
async function statuses(env: TestEnvironment, userId: string): Promise<Record<string, string>> {
  const list = await sdkFor(env).userManagement.listSessions(userId);
  return Object.fromEntries(list.data.map((s) => [s.id, (s as unknown as { status: string }).status]));
}

describe('UserSessions widget REST', () => {
  it("lists the caller's live sessions only, in the widgets' ActiveSession shape", async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const res = await w.a.http.get('/_widgets/UserProfile/sessions');
    expect(res.status).toBe(200);
    expect(res.body.data.map((s: { id: string }) => s.id).sort()).toEqual([w.aSid, w.bSid].sort());
    // b's token was never used: no device, no activity (a's, used by this very call: session-device.http.test.ts).
    const unused = res.body.data.find((s: { id: string }) => s.id === w.bSid);
    expect(unused).toEqual({
      id: w.bSid,
      userlandUserId: w.a.userId,
      ipAddress: null,
      userAgent: null,
      organizationId: w.a.organizationId,
      state: { tag: 'Issued', expiresAt: expect.stringMatching(ISO) },
      currentLocation: null,
      usedSsoAuth: false,
      usedPasswordAuth: false,
      usedPasskeyAuth: false,
      usedAppleOauth: false,
      usedBitbucketOauth: false,
      usedGithubOauth: false,
      usedGitLabOauth: false,
      usedGoogleOauth: false,
      usedLinkedInOauth: false,
      usedImpersonation: false,
      usedMicrosoftOauth: false,
      usedSlackOauth: false,
      usedXeroOauth: false,
      usedMagicAuth: false,
      impersonatorUserId: null,
      impersonatorEmail: null,
      impersonationReason: null,
      lastActivityAt: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    // A revoked session is no longer listed.
    await sdkFor(env).userManagement.revokeSession({ sessionId: w.bSid });
    const after = await w.a.http.get('/_widgets/UserProfile/sessions');
    expect(after.body.data.map((s: { id: string }) => s.id)).toEqual([w.aSid]);
  });

  it('revokes one of its own sessions: the event is recorded and that token is refused at once', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const b = clientFor(env, w.bToken);
    expect((await b.http.get('/_widgets/UserProfile/me')).status).toBe(200);
    const res = await w.a.http.delete(`/_widgets/UserProfile/sessions/revoke/${w.bSid}`);
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect((await b.http.get('/_widgets/UserProfile/me')).status).toBe(403);
    expect((await b.graphql('{ me { id } }')).status).toBe(403);
    expect((await storedEventData(env, 'session.revoked')).map((e) => e.id)).toEqual([w.bSid]);
    // The caller's own token still works.
    expect((await w.a.http.get('/_widgets/UserProfile/sessions')).status).toBe(200);
  });

  it("answers 404 for another user's session and an unknown one, and revokes nothing", async () => {
    const env = await newEnvironment();
    const w = await world(env);
    for (const id of [w.cSid, 'session_01NOPE']) {
      const res = await w.a.http.delete(`/_widgets/UserProfile/sessions/revoke/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: expect.any(String) });
    }
    expect((await w.c.http.get('/_widgets/UserProfile/me')).status).toBe(200);
    expect(await storedEventData(env, 'session.revoked')).toEqual([]);
  });

  it('revoke-all reads its JSON body on DELETE and keeps the current session', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const b2 = await anotherToken(env, w.a.organizationId, w.a.userId);
    const res = await w.a.http.request('DELETE', '/_widgets/UserProfile/sessions/revoke-all', {
      body: { currentSessionId: w.aSid },
    });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect((await w.a.http.get('/_widgets/UserProfile/me')).status).toBe(200);
    expect((await clientFor(env, w.bToken).http.get('/_widgets/UserProfile/me')).status).toBe(403);
    expect((await clientFor(env, b2).http.get('/_widgets/UserProfile/me')).status).toBe(403);
    const mine = await statuses(env, w.a.userId);
    expect(mine[w.aSid]).toBe('active');
    expect(Object.values(mine).filter((s) => s === 'revoked')).toHaveLength(2);
    // The other user's session is untouched.
    expect((await statuses(env, w.c.userId))[w.cSid]).toBe('active');
    expect(await storedEventData(env, 'session.revoked')).toHaveLength(2);
  });

  it("revoke-all ends the caller's live sessions in every organization at once, and leaves ended ones as they were", async () => {
    const env = await newEnvironment();
    const w = await world(env);
    // The same user in a second organization, with two sessions there; one more here, revoked before.
    const other = await env.http.post('/organizations', { name: 'Second' });
    await env.http.post('/user_management/organization_memberships', {
      user_id: w.a.userId,
      organization_id: other.body.id,
    });
    const elsewhere = [
      await anotherToken(env, other.body.id, w.a.userId),
      await anotherToken(env, other.body.id, w.a.userId),
    ];
    const ended = await anotherToken(env, w.a.organizationId, w.a.userId);
    await sdkFor(env).userManagement.revokeSession({ sessionId: JSON.parse(atob(ended.split('.')[1] as string)).sid });
    const eventsBefore = (await storedEventData(env, 'session.revoked')).length;

    const res = await w.a.graphql('mutation { revokeAllSessions { __typename } }');
    expect(res.body).toEqual({ data: { revokeAllSessions: { __typename: 'AllSessionsRevoked' } } });
    const mine = await statuses(env, w.a.userId);
    expect(mine[w.aSid]).toBe('active');
    expect(Object.values(mine).sort()).toEqual(['active', 'revoked', 'revoked', 'revoked', 'revoked']);
    for (const token of [w.bToken, ...elsewhere])
      expect((await clientFor(env, token).http.get('/_widgets/UserProfile/me')).status).toBe(403);
    // One event per session it ended (b and the two elsewhere), none for the one ended before.
    expect((await storedEventData(env, 'session.revoked')).length - eventsBefore).toBe(3);
    expect((await statuses(env, w.c.userId))[w.cSid]).toBe('active');
  });

  it.each([
    ['no body', undefined],
    ['an empty object', {}],
    ['a number for currentSessionId', { currentSessionId: 7 }],
  ])('revoke-all with %s is a JSON 4xx and revokes nothing', async (_name, body) => {
    const env = await newEnvironment();
    const w = await world(env);
    const res = await w.a.http.request('DELETE', '/_widgets/UserProfile/sessions/revoke-all', { body });
    expect([400, 422]).toContain(res.status);
    expect(res.body).toMatchObject({ message: expect.any(String) });
    expect(Object.values(await statuses(env, w.a.userId))).toEqual(['active', 'active']);
  });

  it('revoke-all with a body that is not JSON is 415, and revokes nothing', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const res = await w.a.http.request('DELETE', '/_widgets/UserProfile/sessions/revoke-all', {
      raw: 'currentSessionId=x',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(Object.values(await statuses(env, w.a.userId))).toEqual(['active', 'active']);
  });

  it('needs no widget permission, and refuses a missing token with 403', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: [] });
    expect((await a.http.get('/_widgets/UserProfile/sessions')).status).toBe(200);
    const none = await fetch(`${env.world.url}/_widgets/UserProfile/sessions`);
    expect(none.status).toBe(403);
  });
});

describe('sessions on GraphQL', () => {
  it('lists them with isCurrent and a SessionState object', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const data = await graphqlRequestFor(env, w.a.token).request<{ sessions: Array<Record<string, unknown>> }>(
      `{ sessions { id isCurrent ipAddress userAgent organizationId currentLocation { cityName countryISOCode }
         lastActivityAt state { tag expiresAt } createdAt updatedAt } }`,
    );
    expect(data.sessions).toHaveLength(2);
    // The current session was used by this request: it has a device and an activity.
    expect(data.sessions.find((s) => s.id === w.aSid)).toEqual({
      id: w.aSid,
      isCurrent: true,
      ipAddress: '127.0.0.1',
      userAgent: expect.any(String),
      organizationId: w.a.organizationId,
      currentLocation: null,
      lastActivityAt: expect.stringMatching(ISO),
      state: { tag: 'Issued', expiresAt: expect.stringMatching(ISO) },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(data.sessions.find((s) => s.id === w.bSid)).toMatchObject({
      isCurrent: false,
      ipAddress: null,
      userAgent: null,
      lastActivityAt: null,
    });
  });

  it("revokeSession answers SessionRevoked, or SessionNotFound for another user's session", async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const mutation = `mutation ($id: ID!) { revokeSession(input: { sessionId: $id }) {
      __typename ... on SessionRevoked { session { id isCurrent state { tag } } } ... on SessionNotFound { sessionId } } }`;
    const other = await w.a.graphql(mutation, { id: w.cSid });
    expect(other).toEqual({
      status: 200,
      body: { data: { revokeSession: { __typename: 'SessionNotFound', sessionId: w.cSid } } },
    });
    expect((await w.c.http.get('/_widgets/UserProfile/me')).status).toBe(200);
    const own = await w.a.graphql(mutation, { id: w.bSid });
    expect(own.body.data.revokeSession).toEqual({
      __typename: 'SessionRevoked',
      session: { id: w.bSid, isCurrent: false, state: { tag: 'Revoked' } },
    });
    expect((await clientFor(env, w.bToken).graphql('{ me { id } }')).status).toBe(403);
    expect((await storedEventData(env, 'session.revoked')).map((e) => e.id)).toEqual([w.bSid]);
  });

  it("revokeAllSessions keeps the token's own session (its sid)", async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const res = await clientFor(env, w.bToken).graphql(
      'mutation { revokeAllSessions { __typename ... on AllSessionsRevoked { success } } }',
    );
    expect(res.body).toEqual({ data: { revokeAllSessions: { __typename: 'AllSessionsRevoked', success: true } } });
    expect(await statuses(env, w.a.userId)).toEqual({ [w.aSid]: 'revoked', [w.bSid]: 'active' });
    expect((await w.a.graphql('{ sessions { id } }')).status).toBe(403);
  });
});

describe('sessions on typed tRPC', () => {
  it('client.sessions.list, revoke and revokeAll', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const b2 = await anotherToken(env, w.a.organizationId, w.a.userId);
    const b2Sid = JSON.parse(atob(b2.split('.')[1] as string)).sid;
    const trpc = trpcFor(env, w.a.token);
    const list = await trpc.client.sessions.list.query();
    expect(list.map((s) => s.id).sort()).toEqual([w.aSid, w.bSid, b2Sid].sort());
    expect(list.find((s) => s.isCurrent)?.id).toBe(w.aSid);

    expect(await trpc.client.sessions.revoke.mutate({ sessionId: w.cSid })).toEqual({
      __typename: 'SessionNotFound',
      sessionId: w.cSid,
    });
    const revoked = await trpc.client.sessions.revoke.mutate({ sessionId: w.bSid });
    expect(revoked).toMatchObject({ __typename: 'SessionRevoked', session: { id: w.bSid, state: { tag: 'Revoked' } } });
    expect(await trpc.client.sessions.revokeAll.mutate()).toEqual({ __typename: 'AllSessionsRevoked', success: true });
    expect(await statuses(env, w.a.userId)).toEqual({ [w.aSid]: 'active', [w.bSid]: 'revoked', [b2Sid]: 'revoked' });
    const gone = await trpcFor(env, b2)
      .client.sessions.list.query()
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(TRPCClientError);
    expect((gone as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(403);
  });
});

describe('an admin-portal principal (no user)', () => {
  it('is refused the session operations with 403 / FORBIDDEN', async () => {
    const env = await newEnvironment();
    const w = await world(env);
    const portal = await portalCaller(env, w.a.organizationId);
    await expect(portal.caller.widgets.sessions({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(portal.caller.client.sessions.revokeAll()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const res = await portal.graphql('{ sessions { id } }');
    expect(res.errors?.[0]?.message).toMatch(/token of a user/);
    expect(Object.values(await statuses(env, w.a.userId))).toEqual(['active', 'active']);
  });
});
