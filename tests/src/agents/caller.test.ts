import { signingKeys } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { adminCaller, makeMember, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';

describe('agents and client tokens over tRPC', () => {
  it('validates and fetches through the caller as over REST', async () => {
    const env = await newEnvironment();
    const organization_id = await makeOrganization(env);
    const agent = await (await adminCaller()).agents.register({ environment: env.environmentId, organization_id });
    const result = await env.caller.agents.validateCredential({ type: 'api_key', credential: agent.api_key });
    expect(result).toEqual({ valid: true, registration_id: agent.registration_id, expires_at: null });
    const registration = await env.caller.agents.getRegistration({ id: agent.registration_id });
    expect(registration.organization_id).toBe(organization_id);
    await expect(env.caller.agents.getRegistration({ id: 'agent_reg_nope' })).rejects.toMatchObject({ status: 404 });
  });

  it('is 403 feature_not_enabled with the flag off', async () => {
    const env = await newEnvironment({ flags: { agents: false } });
    await expect(env.caller.agents.validateCredential({ type: 'api_key', credential: 'x' })).rejects.toMatchObject({
      status: 403,
      apiCode: 'feature_not_enabled',
    });
  });

  it('a refused client token makes no signing key and no session', async () => {
    const env = await newEnvironment();
    const organization_id = await makeOrganization(env);
    const user_id = await makeMember(env, organization_id, 'inactive');
    await expect(env.caller.clientTokens.create({ organization_id, user_id })).rejects.toMatchObject({ status: 422 });
    expect(
      await env.deps.db.select().from(signingKeys).where(eq(signingKeys.environmentId, env.environmentId)),
    ).toEqual([]);
  });
});
