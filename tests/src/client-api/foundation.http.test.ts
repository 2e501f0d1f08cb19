import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { clientFor, clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment } from '../helpers/world.ts';

const STATUS = 'query ClientApiStatus { clientApiStatus }';

describe('client and widget tokens on /client/graphql', () => {
  it('a widget token from the SDK carries the scopes its roles grant, its own sid, and is accepted', async () => {
    const env = await newEnvironment();
    const { organizationId, userId } = await clientSetup(env, { kind: 'client', roleSlug: 'admin' });
    const { token } = await sdkFor(env).widgets.createToken({
      organizationId,
      userId,
      scopes: ['widgets:users-table:manage'],
    });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: userId, org_id: organizationId, permissions: ['widgets:users-table:manage'] });
    expect(claims.sid).toMatch(/^widget_session_/);
    // The widgets decode the payload with atob: it must be plain base64 (no '-' or '_').
    expect(token.split('.')[1]).toMatch(/^[A-Za-z0-9+/=]+$/);
    const res = await clientFor(env, token).graphql(STATUS);
    expect(res).toEqual({ status: 200, body: { data: { clientApiStatus: 'ok' } } });
  });

  it('an operation-20 client token is accepted too', async () => {
    const env = await newEnvironment();
    const { graphql } = await clientSetup(env, { kind: 'client' });
    expect(await graphql(STATUS)).toEqual({ status: 200, body: { data: { clientApiStatus: 'ok' } } });
  });

  it('refuses a missing token, an API key, a revoked session and a token of another environment with 403', async () => {
    const env = await newEnvironment();
    const setup = await clientSetup(env, { kind: 'client' });
    const none = await clientFor(env, '').http.post('/client/graphql', { query: STATUS });
    expect(none.status).toBe(403);
    expect(none.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await clientFor(env, env.apiKey).graphql(STATUS)).status).toBe(403);

    const other = await newEnvironment();
    const foreign = await clientSetup(other);
    // A token is only good in its own environment: tamper the audience and it fails verification.
    const [head, , sig] = foreign.token.split('.');
    const payload = Buffer.from(JSON.stringify({ ...foreign.claims, aud: `${env.clientId}:client_api` })).toString(
      'base64url',
    );
    expect((await clientFor(env, `${head}.${payload}.${sig}`).graphql(STATUS)).status).toBe(403);

    await sdkFor(env).userManagement.revokeSession({ sessionId: String(setup.claims.sid) });
    expect((await setup.graphql(STATUS)).status).toBe(403);
  });

  it('refuses widget scopes that do not exist with 422 and stores no session', async () => {
    const env = await newEnvironment();
    const { organizationId, userId } = await clientSetup(env, { kind: 'client' });
    const res = await env.http.post('/widgets/token', {
      organization_id: organizationId,
      user_id: userId,
      scopes: ['widgets:everything'],
    });
    expect(res.status).toBe(422);
    const sessions = await sdkFor(env).userManagement.listSessions(userId);
    expect(sessions.data).toHaveLength(1);
  });
});
