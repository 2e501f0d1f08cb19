import { type DbHandle, openDb, sessions, users } from '@atrium/db';
import { type Deps, newCaches, verifyClientToken } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * Client tokens are accepted by two surfaces today: `verifyClientToken` (the check every client
 * surface must call) and operation 18, which refuses them whatever their state (another kind).
 * A revoked session's token must be refused by both, at once, by every process: `other` is a
 * second process's view: its own caches and, on PostgreSQL, its own connection pool.
 */
let other: Deps;
let otherHandle: DbHandle | undefined;

beforeAll(async () => {
  const env = await newEnvironment();
  const databaseUrl = inject('databaseUrl');
  otherHandle = databaseUrl ? await openDb({ databaseUrl, poolSize: 2 }) : undefined;
  other = { ...env.deps, db: otherHandle?.db ?? env.deps.db, caches: newCaches() };
});
afterAll(async () => {
  await otherHandle?.close();
});

async function issue(env: TestEnvironment) {
  const organizationId = await makeOrganization(env);
  const userId = await makeMember(env, organizationId);
  const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
  expect(res.status).toBe(201);
  return { organizationId, userId, token: res.body.token as string, sessionId: String(decodeJwt(res.body.token).sid) };
}

const envOf = (env: TestEnvironment) => ({ id: env.environmentId, clientId: env.clientId });

async function refusedByOperation18(env: TestEnvironment, token: string) {
  const res = await env.http.post('/agents/credentials/validate', { type: 'access_token', credential: token });
  return res.status === 200 && res.body.valid === false;
}

describe('a client token is accepted only while its stored session is live', () => {
  it('verifies while active, in this process and another, and names its user, organization and session', async () => {
    const env = await newEnvironment();
    const { token, userId, organizationId, sessionId } = await issue(env);
    const expected = { sessionId, userId, organizationId, expiresAt: new Date((decodeJwt(token).exp ?? 0) * 1000) };
    expect(await verifyClientToken(env.deps, envOf(env), token)).toEqual(expected);
    expect(await verifyClientToken(other, envOf(env), token)).toEqual(expected);
    expect(await refusedByOperation18(env, token)).toBe(true);
  });

  it('a revoked session’s token is refused by every surface and process on its next use', async () => {
    const env = await newEnvironment();
    const { token, sessionId } = await issue(env);
    // Both processes have used (and would have cached) the token before.
    expect(await verifyClientToken(env.deps, envOf(env), token)).not.toBeNull();
    expect(await verifyClientToken(other, envOf(env), token)).not.toBeNull();

    const revoked = await env.http.post('/user_management/sessions/revoke', { session_id: sessionId });
    expect(revoked.status).toBe(200);
    const answeredAt = Date.now();
    expect(await verifyClientToken(other, envOf(env), token)).toBeNull();
    expect(await verifyClientToken(env.deps, envOf(env), token)).toBeNull();
    expect(await refusedByOperation18(env, token)).toBe(true);
    // Refused from the first check after the revocation answered: well within a second.
    expect(Date.now() - answeredAt).toBeLessThan(1_000);
  });

  it('refuses a token whose session expired, was deleted with its user, or belongs to another environment', async () => {
    const env = await newEnvironment();
    const stranger = await newEnvironment();
    const expired = await issue(env);
    await env.deps.db
      .update(sessions)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(sessions.id, expired.sessionId));
    expect(await verifyClientToken(env.deps, envOf(env), expired.token)).toBeNull();

    const deleted = await issue(env);
    await env.deps.db.delete(users).where(eq(users.id, deleted.userId));
    expect(await verifyClientToken(env.deps, envOf(env), deleted.token)).toBeNull();

    const live = await issue(env);
    expect(await verifyClientToken(env.deps, envOf(stranger), live.token)).toBeNull();
    // A token past its `exp` is refused by the signature check already.
    const later: Deps = { ...env.deps, now: () => new Date(Date.now() + 16 * 60_000) };
    expect(await verifyClientToken(later, envOf(env), live.token)).toBeNull();
    expect(await verifyClientToken(env.deps, envOf(env), live.token)).not.toBeNull();
  });

  it('refuses the token once its user is not an active member of the organization, and after a reactivation', async () => {
    const env = await newEnvironment();
    const { token, userId, organizationId } = await issue(env);
    const [membership] = (
      await env.http.get(
        `/user_management/organization_memberships?user_id=${userId}&organization_id=${organizationId}`,
      )
    ).body.data;
    const off = await env.http.put(`/user_management/organization_memberships/${membership.id}/deactivate`, {});
    expect(off.body.status, off.text).toBe('inactive');
    expect(await verifyClientToken(other, envOf(env), token)).toBeNull();
    // Deactivation ended the session (sessions/service.ts endSessionsOfMembership): a reactivated
    // member needs a new one.
    await env.http.put(`/user_management/organization_memberships/${membership.id}/reactivate`, {});
    expect(await verifyClientToken(other, envOf(env), token)).toBeNull();
    const fresh = await issue(env);
    await env.http.delete(
      `/user_management/organization_memberships/${(await env.http.get(`/user_management/organization_memberships?user_id=${fresh.userId}`)).body.data[0].id}`,
    );
    expect(await verifyClientToken(other, envOf(env), fresh.token)).toBeNull();
  });

  it('refuses tampered and foreign tokens', async () => {
    const env = await newEnvironment();
    const { token } = await issue(env);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'user_01J00000000000000000000000' })).toString('base64url')}.${signature}`;
    for (const bad of [forged, `${token}x`, 'not.a.token', '', token.replace(/\.[^.]+$/, '.AAAA')]) {
      expect(await verifyClientToken(env.deps, envOf(env), bad)).toBeNull();
    }
  });
});
