import { newId, organizationMemberships, sessions } from '@atrium/db';
import { purgeExpiredSessions, SESSION_RETENTION_MS } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

async function sessionsOf(env: TestEnvironment) {
  return env.deps.db.select().from(sessions).where(eq(sessions.environmentId, env.environmentId));
}

describe('POST /client/token', () => {
  it('issues a session-bound RS256 token that verifies against the served JWKS', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const userId = await makeMember(env, organizationId);
    const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['token']);
    expect(res.body.token.split('.')).toHaveLength(3);

    const jwks = createRemoteJWKSet(new URL(`${env.world.url}/sso/jwks/${env.clientId}`));
    const audience = `${env.clientId}:client_api`;
    const { payload, protectedHeader } = await jwtVerify(res.body.token, jwks, {
      issuer: TEST_ISSUER,
      audience,
      typ: 'atrium-client+jwt',
      algorithms: ['RS256'],
    });
    expect(protectedHeader).toMatchObject({
      alg: 'RS256',
      typ: 'atrium-client+jwt',
      kid: expect.stringMatching(/^key_/),
    });
    expect(payload).toMatchObject({ iss: TEST_ISSUER, aud: audience, sub: userId, org_id: organizationId });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(15 * 60);
    expect(payload.exp! - payload.iat!).toBeGreaterThan(0);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);

    const stored = await sessionsOf(env);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: payload.sid, userId, organizationId, revokedAt: null });
    expect(stored[0]?.expiresAt.getTime()).toBe(payload.exp! * 1000);
  });

  it('is its own kind: not an agent token (typ, audience), so no agent check accepts it', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const userId = await makeMember(env, organizationId);
    const { token } = (await env.http.post('/client/token', { organization_id: organizationId, user_id: userId })).body;
    expect(decodeProtectedHeader(token).typ).toBe('atrium-client+jwt');
    expect(decodeJwt(token).aud).toBe(`${env.clientId}:client_api`);
    // The agent kind's audience (the client id, the SDK's default) does not match.
    const jwks = createRemoteJWKSet(new URL(`${env.world.url}/sso/jwks/${env.clientId}`));
    await expect(jwtVerify(token, jwks, { audience: env.clientId })).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    // Operation 18 refuses it, also when asked for the client token's own audience (typ differs).
    for (const body of [
      { type: 'access_token', credential: token },
      { type: 'access_token', credential: token, audience: `${env.clientId}:client_api` },
    ]) {
      const res = await env.http.post('/agents/credentials/validate', body);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 200,
        body: { valid: false, registration_id: null, expires_at: null },
      });
    }
  });

  it('mints through the tRPC caller too', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const userId = await makeMember(env, organizationId);
    const caller = await env.caller.clientTokens.create({ organization_id: organizationId, user_id: userId });
    expect(caller.token.split('.')).toHaveLength(3);
  });

  describe('refusals store nothing', () => {
    it('unknown organization → 404', async () => {
      const env = await newEnvironment();
      const userId = await makeMember(env, null);
      const res = await env.http.post('/client/token', {
        organization_id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ',
        user_id: userId,
      });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it("another environment's organization → 404", async () => {
      const env = await newEnvironment();
      const other = await newEnvironment();
      const foreignOrg = await makeOrganization(other);
      const userId = await makeMember(env, null);
      const res = await env.http.post('/client/token', { organization_id: foreignOrg, user_id: userId });
      expect(res.status).toBe(404);
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it('unknown user → 404', async () => {
      const env = await newEnvironment();
      const organizationId = await makeOrganization(env);
      const res = await env.http.post('/client/token', {
        organization_id: organizationId,
        user_id: 'user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
      });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it.each([
      ['no membership', null],
      ['an inactive membership', 'inactive'],
      ['a pending membership', 'pending'],
    ] as const)('user with %s → 422 organization_membership_required', async (_label, status) => {
      const env = await newEnvironment();
      const organizationId = await makeOrganization(env);
      const userId = await makeMember(env, organizationId, status);
      const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('organization_membership_required');
      expect(res.body.errors[0]).toMatchObject({ field: 'user_id', code: 'organization_membership_required' });
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it('a membership of another organization does not count', async () => {
      const env = await newEnvironment();
      const organizationId = await makeOrganization(env);
      const otherOrg = await makeOrganization(env, 'Other');
      const userId = await makeMember(env, otherOrg);
      const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
      expect(res.status).toBe(422);
      const memberships = await env.deps.db
        .select()
        .from(organizationMemberships)
        .where(
          and(eq(organizationMemberships.environmentId, env.environmentId), eq(organizationMemberships.userId, userId)),
        );
      expect(memberships).toHaveLength(1);
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it.each([
      ['missing organization_id', { user_id: 'user_x' }, 'organization_id'],
      ['missing user_id', { organization_id: 'org_x' }, 'user_id'],
      ['numeric user_id', { organization_id: 'org_x', user_id: 5 }, 'user_id'],
    ])('%s → 422', async (_label, body, field) => {
      const env = await newEnvironment();
      const res = await env.http.post('/client/token', body);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await sessionsOf(env)).toHaveLength(0);
    });

    it('no API key → 401', async () => {
      const env = await newEnvironment();
      const res = await env.http.post(
        '/client/token',
        { organization_id: 'org_x', user_id: 'user_x' },
        { Authorization: '' },
      );
      expect(res.status).toBe(401);
    });
  });
});

describe('session retention', () => {
  it('purges sessions expired longer than the retention, and keeps the rest', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const userId = await makeMember(env, organizationId);
    const live = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
    expect(live.status).toBe(201);
    const now = Date.now();
    const session = (expiresAt: number) => ({
      id: newId('session'),
      environmentId: env.environmentId,
      userId,
      organizationId,
      expiresAt: new Date(expiresAt),
      createdAt: new Date(expiresAt - 15 * 60_000),
    });
    const old = [session(now - SESSION_RETENTION_MS - 60_000), session(now - SESSION_RETENTION_MS - 3_600_000)];
    const recent = session(now - SESSION_RETENTION_MS + 3_600_000);
    await env.deps.db.insert(sessions).values([...old, recent]);
    expect(await sessionsOf(env)).toHaveLength(4);

    // Batches of one: the sweep goes on until a batch comes back short.
    expect(await purgeExpiredSessions(env.deps.db, new Date(now), 1)).toBeGreaterThanOrEqual(2);
    const left = (await sessionsOf(env)).map((row) => row.id).sort();
    expect(left).not.toContain(old[0]?.id);
    expect(left).not.toContain(old[1]?.id);
    expect(left).toContain(recent.id);
    expect(left).toHaveLength(2);
  });
});
