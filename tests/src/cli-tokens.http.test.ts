import { runCli } from '@atrium/server';
import { describe, expect, it } from 'vitest';
import { adminTokenOf, makeOrganization } from './helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from './helpers/world.ts';

async function cli(env: TestEnvironment, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    env: { ATRIUM_URL: env.world.url, ATRIUM_ADMIN_TOKEN: await adminTokenOf() },
  });
  return { code, out, err, json: () => JSON.parse(out) };
}

describe('admin CLI: agents, connections, signing keys', () => {
  it('agents register --json prints a registration id, an API key and an access token that validate', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const registered = await cli(
      env,
      'agents',
      'register',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--json',
    );
    expect(registered.code).toBe(0);
    const body = registered.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'api_key', 'registration_id']);
    expect(body.registration_id).toMatch(/^agent_reg_/);
    expect(body.api_key).toMatch(/^sk_agent_[0-9A-Za-z]{40}$/);
    const valid = await env.http.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: body.access_token,
    });
    expect(valid.body.valid).toBe(true);

    const revoked = await cli(env, 'agents', 'revoke', '--registration', body.registration_id, '--json');
    expect(revoked.code).toBe(0);
    expect(revoked.json()).toMatchObject({ registration_id: body.registration_id, status: 'revoked' });
    const after = await env.http.post('/agents/credentials/validate', { type: 'api_key', credential: body.api_key });
    expect(after.body.valid).toBe(false);

    const unknown = await cli(env, 'agents', 'revoke', '--registration', 'agent_reg_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('entity_not_found');
  });

  it('connections create / deactivate / activate / delete', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const created = await cli(
      env,
      'connections',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'OktaSAML',
      '--name',
      'Okta',
      '--json',
    );
    expect(created.code).toBe(0);
    const connection = created.json();
    expect(connection).toMatchObject({
      object: 'connection',
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'active',
    });
    expect((await cli(env, 'connections', 'deactivate', '--connection', connection.id, '--json')).json().state).toBe(
      'inactive',
    );
    expect((await cli(env, 'connections', 'activate', '--connection', connection.id, '--json')).json().state).toBe(
      'active',
    );
    expect((await env.http.get('/connections')).body.data).toHaveLength(1);
    expect((await cli(env, 'connections', 'delete', '--connection', connection.id)).code).toBe(0);
    expect((await env.http.get('/connections')).body.data).toHaveLength(0);
    const bad = await cli(
      env,
      'connections',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'FaxSAML',
      '--name',
      'x',
    );
    expect(bad.code).toBe(1);
  });

  it('signing-keys rotate publishes a new key at once', async () => {
    const env = await newEnvironment();
    await env.http.get(`/sso/jwks/${env.clientId}`);
    const rotated = await cli(env, 'signing-keys', 'rotate', '--environment', env.environmentId, '--json');
    expect(rotated.code).toBe(0);
    const { kid, active_from } = rotated.json();
    expect(Date.parse(active_from) - Date.now()).toBeGreaterThan(4 * 60_000); // default delay: 5 minutes
    const jwks = await env.http.get(`/sso/jwks/${env.clientId}`);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
    expect(jwks.body.keys).toHaveLength(2);
    const listed = await cli(env, 'signing-keys', 'list', '--environment', env.environmentId, '--json');
    expect(listed.json().find((k: { signing: boolean }) => k.signing).kid).not.toBe(kid);
  });
});
