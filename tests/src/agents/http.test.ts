import { agentAccessTokens, agentApiKeys, agentRegistrations } from '@atrium/db';
import { signToken } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { adminCaller, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

const INVALID = { valid: false, registration_id: null, expires_at: null };

async function register(env: TestEnvironment) {
  const organizationId = await makeOrganization(env);
  const admin = await adminCaller();
  const created = await admin.agents.register({
    environment: env.environmentId,
    organization_id: organizationId,
    userland_user_id: 'user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
  });
  return { ...created, organizationId };
}

/** Everything stored about an environment's agents, to prove validation changes nothing. */
async function snapshot(env: TestEnvironment) {
  const db = env.deps.db;
  return {
    registrations: await db
      .select()
      .from(agentRegistrations)
      .where(eq(agentRegistrations.environmentId, env.environmentId)),
    keys: await db.select().from(agentApiKeys).where(eq(agentApiKeys.environmentId, env.environmentId)),
    tokens: await db.select().from(agentAccessTokens).where(eq(agentAccessTokens.environmentId, env.environmentId)),
  };
}

const validate = (env: TestEnvironment, body: unknown) => env.http.post('/agents/credentials/validate', body);

describe('POST /agents/credentials/validate', () => {
  it('accepts a live access token and API key, read-only (three times, nothing changes)', async () => {
    const env = await newEnvironment();
    const agent = await register(env);
    const before = await snapshot(env);
    for (let i = 0; i < 3; i++) {
      const token = await validate(env, { type: 'access_token', credential: agent.access_token });
      expect(token.status).toBe(200);
      expect(token.body).toEqual({
        valid: true,
        registration_id: agent.registration_id,
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      });
      expect(Date.parse(token.body.expires_at)).toBeGreaterThan(Date.now());
      const key = await validate(env, { type: 'api_key', credential: agent.api_key });
      expect(key.status).toBe(200);
      expect(key.body).toEqual({ valid: true, registration_id: agent.registration_id, expires_at: null });
    }
    expect(await snapshot(env)).toEqual(before);
  });

  it('answers valid: false for every invalid credential', async () => {
    const env = await newEnvironment();
    const agent = await register(env);
    const other = await newEnvironment();
    const foreign = await register(other);
    const attacker = await generateKeyPair('RS256');
    const [header, payload] = agent.access_token.split('.');
    const forged = await new SignJWT({ org_id: agent.organizationId, jti: 'agent_at_x' })
      .setProtectedHeader({ alg: 'RS256', kid: JSON.parse(Buffer.from(header as string, 'base64url').toString()).kid })
      .setIssuer(TEST_ISSUER)
      .setAudience(env.clientId)
      .setSubject(agent.registration_id)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(attacker.privateKey);
    const tampered = `${header}.${Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload as string, 'base64url').toString()), org_id: 'org_other' }),
    ).toString('base64url')}.${agent.access_token.split('.')[2]}`;
    const cases: [string, { type: string; credential: string }][] = [
      ['garbage token', { type: 'access_token', credential: 'not-a-token' }],
      ['empty token', { type: 'access_token', credential: '' }],
      ['garbage key', { type: 'api_key', credential: 'sk_agent_nope' }],
      ['oversized token', { type: 'access_token', credential: `${agent.access_token}${'A'.repeat(20_000)}` }],
      ['unknown well-formed key', { type: 'api_key', credential: `sk_agent_${'a'.repeat(40)}` }],
      ['token signed by another key', { type: 'access_token', credential: forged }],
      ['tampered payload', { type: 'access_token', credential: tampered }],
      ['API key sent as a token', { type: 'access_token', credential: agent.api_key }],
      ['token sent as an API key', { type: 'api_key', credential: agent.access_token }],
      ["another environment's token", { type: 'access_token', credential: foreign.access_token }],
      ["another environment's key", { type: 'api_key', credential: foreign.api_key }],
    ];
    for (const [label, body] of cases) {
      const res = await validate(env, body);
      expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 200, body: INVALID });
    }
  });

  it('answers valid: false for a token whose exp has passed, even though its record is live', async () => {
    const env = await newEnvironment();
    const agent = await register(env);
    const env2 = { id: env.environmentId, clientId: env.clientId };
    const jti = 'agent_at_01HZZZZZZZZZZZZZZZZZZZZZZZ';
    const expired = await signToken(
      env.deps,
      env2,
      'agent',
      { sub: agent.registration_id, jti, org_id: agent.organizationId },
      60,
      new Date(Date.now() - 3_600_000),
    );
    await env.deps.db.insert(agentAccessTokens).values({
      id: jti,
      environmentId: env.environmentId,
      registrationId: agent.registration_id,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    expect((await validate(env, { type: 'access_token', credential: expired.token })).body).toEqual(INVALID);
  });

  it('answers valid: false for a revoked token record, and for a revoked or unverified registration', async () => {
    const env = await newEnvironment();
    const agent = await register(env);
    // Expired: the token row says so (the JWT's exp is checked the same way by jose).
    await env.deps.db
      .update(agentAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(agentAccessTokens.registrationId, agent.registration_id));
    expect((await validate(env, { type: 'access_token', credential: agent.access_token })).body).toEqual(INVALID);

    const unverified = await register(env);
    await env.deps.db
      .update(agentRegistrations)
      .set({ status: 'unverified' })
      .where(eq(agentRegistrations.id, unverified.registration_id));
    expect((await validate(env, { type: 'access_token', credential: unverified.access_token })).body).toEqual(INVALID);
    expect((await validate(env, { type: 'api_key', credential: unverified.api_key })).body).toEqual(INVALID);

    const revoked = await register(env);
    const admin = await adminCaller();
    expect(await admin.agents.revoke({ registration_id: revoked.registration_id })).toMatchObject({
      status: 'revoked',
    });
    expect((await validate(env, { type: 'access_token', credential: revoked.access_token })).body).toEqual(INVALID);
    expect((await validate(env, { type: 'api_key', credential: revoked.api_key })).body).toEqual(INVALID);
    const fetched = await env.http.get(`/agents/registrations/${revoked.registration_id}`);
    expect(fetched.body.status).toBe('revoked');
  });

  it.each([
    ['missing type', { credential: 'x' }, 'type'],
    ['unknown type', { type: 'password', credential: 'x' }, 'type'],
    ['missing credential', { type: 'api_key' }, 'credential'],
  ])('%s → 422', async (_label, body, field) => {
    const env = await newEnvironment();
    const res = await validate(env, body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('is 403 feature_not_enabled when the agents flag is off (and 401 without a key)', async () => {
    const env = await newEnvironment({ flags: { agents: false } });
    const res = await validate(env, { type: 'api_key', credential: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('feature_not_enabled');
    const get = await env.http.get('/agents/registrations/agent_reg_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(get.status).toBe(403);
    const anonymous = await env.http.post(
      '/agents/credentials/validate',
      { type: 'api_key', credential: 'x' },
      {
        Authorization: '',
      },
    );
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /agents/registrations/:id', () => {
  it("returns the specification's shape", async () => {
    const env = await newEnvironment();
    const agent = await register(env);
    const res = await env.http.get(`/agents/registrations/${agent.registration_id}`);
    expect(res.status).toBe(200);
    const ts = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body).toEqual({
      object: 'agent_registration',
      id: agent.registration_id,
      agent_identity: {
        id: expect.stringMatching(/^agent_identity_/),
        userland_user_id: 'user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
        created_at: ts,
        updated_at: ts,
      },
      organization_id: agent.organizationId,
      status: 'verified',
      kind: 'service_auth',
      claim: {
        id: expect.stringMatching(/^agent_reg_claim_[0-9A-Z]{26}$/),
        claim_completion: {
          id: expect.stringMatching(/^agent_reg_claim_completion_[0-9A-Z]{26}$/),
          created_at: ts,
          updated_at: ts,
          expires_at: ts,
          claimed_at: ts,
        },
        created_at: ts,
        updated_at: ts,
        expires_at: ts,
      },
      created_at: ts,
      updated_at: ts,
    });
  });

  it("is 404 for an unknown id and for another environment's registration", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreign = await register(other);
    for (const id of ['agent_reg_01HZZZZZZZZZZZZZZZZZZZZZZZ', foreign.registration_id]) {
      const res = await env.http.get(`/agents/registrations/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
  });
});

describe('admin agents', () => {
  it('refuses an organization of another environment and stores nothing', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreignOrg = await makeOrganization(other);
    const admin = await adminCaller();
    await expect(
      admin.agents.register({ environment: env.environmentId, organization_id: foreignOrg }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await snapshot(env)).toEqual({ registrations: [], keys: [], tokens: [] });
  });
});
