import { newId, sessions } from '@atrium/db';
import { purgeExpiredSessions, SESSION_RETENTION_MS } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../helpers/client.ts';
import { storedEvents } from '../helpers/events.ts';
import { makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function issue(env: TestEnvironment) {
  const organizationId = await makeOrganization(env);
  const userId = await makeMember(env, organizationId);
  const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
  expect(res.status).toBe(201);
  return { organizationId, userId, token: res.body.token as string, sessionId: String(decodeJwt(res.body.token).sid) };
}

async function sessionRow(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(sessions).where(eq(sessions.id, id));
  return row;
}

async function revokedEvents(env: TestEnvironment) {
  return (await storedEvents(env)).filter((e) => e.event === 'session.revoked');
}

describe('POST /user_management/sessions/revoke', () => {
  it('answers 200 with the revoked session; revoking it again changes nothing and records no second event', async () => {
    const env = await newEnvironment();
    const { sessionId, userId, organizationId } = await issue(env);
    const first = await env.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      object: 'session',
      id: sessionId,
      user_id: userId,
      organization_id: organizationId,
      status: 'revoked',
    });
    expect(first.body.ended_at).toBe((await sessionRow(env, sessionId))?.revokedAt?.toISOString());
    const again = await env.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await revokedEvents(env)).toHaveLength(1);
  });

  it('20 concurrent revokes of one session: all 200, one revocation, one event', async () => {
    const env = await newEnvironment();
    const { sessionId } = await issue(env);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => env.http.post('/user_management/sessions/revoke', { session_id: sessionId })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((r) => r.body.ended_at)).size).toBe(1);
    expect(await revokedEvents(env)).toHaveLength(1);
  });

  it.each([
    ['no session_id', {}, 422, 'invalid_request_parameters'],
    ['a numeric session_id', { session_id: 42 }, 422, 'invalid_request_parameters'],
    ['an empty session_id', { session_id: '' }, 422, 'invalid_request_parameters'],
    ['an unknown session_id', { session_id: 'session_01J00000000000000000000000' }, 404, 'entity_not_found'],
  ])('with %s %j answers %i %s and revokes nothing', async (_label, body, status, code) => {
    const env = await newEnvironment();
    const { sessionId } = await issue(env);
    const res = await env.http.post('/user_management/sessions/revoke', body);
    expect(res.status, res.text).toBe(status);
    expect(res.body.code).toBe(code);
    expect((await sessionRow(env, sessionId))?.revokedAt).toBeNull();
    expect(await revokedEvents(env)).toEqual([]);
  });

  it("another environment's session is 404 to revoke, and its user's sessions 404 to list", async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const { sessionId, userId } = await issue(a);
    const revoke = await b.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    expect(revoke.status).toBe(404);
    expect(revoke.body.code).toBe('entity_not_found');
    const list = await b.http.get(`/user_management/users/${userId}/sessions`);
    expect(list.status).toBe(404);
    expect(list.body.code).toBe('entity_not_found');
    expect((await sessionRow(a, sessionId))?.revokedAt).toBeNull();
    expect((await a.http.get(`/user_management/users/${userId}/sessions`)).body.data[0].status).toBe('active');
  });
});

describe('GET /user_management/users/:id/sessions', () => {
  it('shows an expired session as expired (ended at its expiry), and refuses bad list parameters', async () => {
    const env = await newEnvironment();
    const { sessionId, userId } = await issue(env);
    const past = new Date(Date.now() - 60_000);
    await env.deps.db.update(sessions).set({ expiresAt: past }).where(eq(sessions.id, sessionId));
    const list = await env.http.get(`/user_management/users/${userId}/sessions`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({
      object: 'list',
      data: [{ id: sessionId, status: 'expired', ended_at: past.toISOString(), expires_at: past.toISOString() }],
      list_metadata: { before: null, after: null },
    });
    // Revoking an expired session changes nothing.
    const revoke = await env.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    expect(revoke.body.status).toBe('expired');
    expect((await sessionRow(env, sessionId))?.revokedAt).toBeNull();
    for (const query of ['limit=0', 'limit=101', 'order=sideways']) {
      const bad = await env.http.get(`/user_management/users/${userId}/sessions?${query}`);
      expect(bad.status, query).toBe(422);
      expect(bad.body.code).toBe('invalid_request_parameters');
    }
  });

  it('the retention sweep purges revoked sessions too, 7 days past their expiry', async () => {
    const env = await newEnvironment();
    const { sessionId, userId, organizationId } = await issue(env);
    await env.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    const now = Date.now();
    const old = {
      id: newId('session'),
      environmentId: env.environmentId,
      userId,
      organizationId,
      expiresAt: new Date(now - SESSION_RETENTION_MS - 60_000),
      revokedAt: new Date(now - SESSION_RETENTION_MS - 120_000),
      createdAt: new Date(now - SESSION_RETENTION_MS - 600_000),
    };
    await env.deps.db.insert(sessions).values(old);
    await purgeExpiredSessions(env.deps.db, new Date(now));
    expect(await sessionRow(env, old.id)).toBeUndefined();
    // The recently revoked one is kept (a record of who held a token) until its time comes.
    expect((await sessionRow(env, sessionId))?.revokedAt).not.toBeNull();
    const listed = await env.http.get(`/user_management/users/${userId}/sessions`);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  });
});

describe('a membership that stops ends its sessions', () => {
  async function membershipOf(env: TestEnvironment, userId: string, organizationId: string) {
    const res = await env.http.get(
      `/user_management/organization_memberships?user_id=${userId}&organization_id=${organizationId}`,
    );
    return res.body.data[0].id as string;
  }

  it('deactivating revokes the live sessions of that organization only, with session.revoked; reactivating does not bring them back', async () => {
    const env = await newEnvironment();
    const { sessionId, userId, organizationId, token } = await issue(env);
    // The same user's session in another organization stays live.
    const otherOrganization = await makeOrganization(env);
    await env.http.post('/user_management/organization_memberships', {
      user_id: userId,
      organization_id: otherOrganization,
    });
    const other = await env.http.post('/client/token', { organization_id: otherOrganization, user_id: userId });
    expect(other.status).toBe(201);
    const otherSessionId = String(decodeJwt(other.body.token).sid);
    const membershipId = await membershipOf(env, userId, organizationId);

    expect(
      (await env.http.put(`/user_management/organization_memberships/${membershipId}/deactivate`, {})).status,
    ).toBe(200);
    const listed = await env.http.get(`/user_management/users/${userId}/sessions`);
    const byId = Object.fromEntries(listed.body.data.map((s: { id: string; status: string }) => [s.id, s.status]));
    expect(byId).toEqual({ [sessionId]: 'revoked', [otherSessionId]: 'active' });
    expect((await sessionRow(env, sessionId))?.revokedAt).toBeInstanceOf(Date);
    const events = await revokedEvents(env);
    expect(events.map((e) => (e.data as { id: string }).id)).toEqual([sessionId]);
    expect(events[0]?.data).toMatchObject({ status: 'revoked', organization_id: organizationId, user_id: userId });

    // Deactivating again changes nothing; reactivating leaves the session ended (its token stays refused).
    await env.http.put(`/user_management/organization_memberships/${membershipId}/deactivate`, {});
    expect(
      (await env.http.put(`/user_management/organization_memberships/${membershipId}/reactivate`, {})).status,
    ).toBe(200);
    expect((await revokedEvents(env)).length).toBe(1);
    const refused = await clientFor(env, token).graphql('{ clientApiStatus }');
    expect(refused.status).toBe(403);
  });

  it('deleting the membership revokes its live sessions, once, with session.revoked', async () => {
    const env = await newEnvironment();
    const { sessionId, userId, organizationId } = await issue(env);
    const membershipId = await membershipOf(env, userId, organizationId);
    expect((await env.http.request('DELETE', `/user_management/organization_memberships/${membershipId}`)).status).toBe(
      204,
    );
    const listed = await env.http.get(`/user_management/users/${userId}/sessions`);
    expect(listed.body.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      [sessionId, 'revoked'],
    ]);
    expect((await revokedEvents(env)).map((e) => (e.data as { id: string }).id)).toEqual([sessionId]);
  });
});
