import { WorkOS } from '@workos-inc/node';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { adminCaller, makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

function sdk(env: TestEnvironment, apiKey = env.apiKey, clientId = env.clientId) {
  const port = Number(new URL(env.world.url).port);
  return new WorkOS(apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId });
}

describe('the official Node SDK', () => {
  it('validates an agent access token locally and remotely, fetches the registration, mints and verifies a client token', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const admin = await adminCaller();
    const agent = await admin.agents.register({ environment: env.environmentId, organization_id: organizationId });
    const workos = sdk(env);

    const local = await workos.agents.validateCredential({ type: 'access_token', credential: agent.access_token });
    expect(local.valid).toBe(true);
    expect(local.registrationId).toBe(agent.registration_id);
    expect(local.claims).toMatchObject({
      registrationId: agent.registration_id,
      organizationId,
      audience: env.clientId,
    });

    const remote = await workos.agents.validateCredential({
      type: 'access_token',
      credential: agent.access_token,
      checkForRevoked: true,
    });
    expect(remote).toMatchObject({ valid: true, registrationId: agent.registration_id });
    expect(remote.expiresAt).toBe(local.expiresAt);

    const key = await workos.agents.validateCredential({ type: 'api_key', credential: agent.api_key });
    expect(key).toMatchObject({ valid: true, registrationId: agent.registration_id });

    const registration = await workos.agents.getRegistration(agent.registration_id);
    expect(registration).toMatchObject({
      id: agent.registration_id,
      organizationId,
      status: 'verified',
      kind: 'service_auth',
    });
    expect(registration.claim?.claimCompletion?.claimedAt).toEqual(expect.any(String));

    // Revocation: still valid locally (signature and exp), refused remotely.
    await admin.agents.revoke({ registration_id: agent.registration_id });
    const revoked = await workos.agents.validateCredential({
      type: 'access_token',
      credential: agent.access_token,
      checkForRevoked: true,
    });
    expect(revoked).toEqual({ valid: false, registrationId: null, expiresAt: null, claims: null });

    // Client token: minted with the SDK's HTTP client, verified against the served JWKS.
    const userId = await makeMember(env, organizationId);
    const { data } = await workos.post<{ token: string }>('/client/token', {
      organization_id: organizationId,
      user_id: userId,
    });
    const jwks = createRemoteJWKSet(new URL(`${env.world.url}/sso/jwks/${env.clientId}`));
    const { payload } = await jwtVerify(data.token, jwks, { audience: `${env.clientId}:client_api` });
    expect(payload).toMatchObject({ sub: userId, org_id: organizationId });
  });

  it('refuses a client token as an agent access token, locally and remotely; agent tokens carry their own typ', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const admin = await adminCaller();
    const agent = await admin.agents.register({ environment: env.environmentId, organization_id: organizationId });
    expect(decodeProtectedHeader(agent.access_token).typ).toBe('at+jwt');
    expect(decodeJwt(agent.access_token).aud).toBe(env.clientId);

    const userId = await makeMember(env, organizationId);
    const { data } = await sdk(env).post<{ token: string }>('/client/token', {
      organization_id: organizationId,
      user_id: userId,
    });
    const workos = sdk(env);
    const local = await workos.agents.validateCredential({ type: 'access_token', credential: data.token });
    expect(local).toEqual({ valid: false, registrationId: null, expiresAt: null, claims: null });
    const remote = await env.http.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: data.token,
    });
    expect({ status: remote.status, body: remote.body }).toEqual({
      status: 200,
      body: { valid: false, registration_id: null, expires_at: null },
    });
    // The agent token still passes the SDK's local check.
    const ok = await workos.agents.validateCredential({ type: 'access_token', credential: agent.access_token });
    expect(ok).toMatchObject({ valid: true, registrationId: agent.registration_id });
  });

  it("does not accept another environment's token locally or remotely", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const admin = await adminCaller();
    const foreign = await admin.agents.register({
      environment: other.environmentId,
      organization_id: await makeOrganization(other),
    });
    const workos = sdk(env);
    // Locally the SDK finds no key of that kid in this environment's JWKS (jose throws for it).
    await expect(
      workos.agents.validateCredential({ type: 'access_token', credential: foreign.access_token }),
    ).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    const remote = await env.http.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: foreign.access_token,
    });
    expect(remote.body).toEqual({ valid: false, registration_id: null, expires_at: null });
    const key = await workos.agents.validateCredential({ type: 'api_key', credential: foreign.api_key });
    expect(key.valid).toBe(false);
  });

  it('sees 403 when the agents flag is off', async () => {
    const env = await newEnvironment({ flags: { agents: false } });
    await expect(
      sdk(env).agents.validateCredential({ type: 'api_key', credential: 'sk_agent_x' }),
    ).rejects.toMatchObject({ status: 403 });
  });
});
