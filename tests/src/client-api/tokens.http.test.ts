import { decodeJwt } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller, adminTokenOf } from '../helpers/tokens.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';

// Every refusal of a credential on every client surface: REST /_widgets/…, /client/graphql and
// typed tRPC client.*. The widgets recover only from 403, so every refusal there is 403; a client
// token on the API-key and admin surfaces is 401 as any bad credential is.

/** The status each client surface answers `token` with, after checking the refusal bodies are JSON. */
async function surfaces(base: string, token: string): Promise<{ rest: number; graphql: number; trpc: number }> {
  const headers = { Authorization: `Bearer ${token}`, ...WIDGET_HEADERS };
  const rest = await fetch(`${base}/_widgets/UserManagement/organizations`, { headers });
  const graphql = await fetch(`${base}/client/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: '{ clientApiStatus }' }),
  });
  const trpc = await fetch(`${base}/trpc/client.organizations`, { headers });
  const bodies = { rest: await rest.json(), graphql: await graphql.json(), trpc: await trpc.json() };
  if (rest.status === 403) expect(bodies.rest).toMatchObject({ message: expect.any(String) });
  if (graphql.status === 403) expect(bodies.graphql.errors[0].extensions.code).toBe('FORBIDDEN');
  if (trpc.status === 403) expect(bodies.trpc.error).toBeDefined();
  return { rest: rest.status, graphql: graphql.status, trpc: trpc.status };
}

const OK = { rest: 200, graphql: 200, trpc: 200 };
const REFUSED = { rest: 403, graphql: 403, trpc: 403 };

const opened: Array<{ close: () => Promise<void> }> = [];
afterAll(async () => {
  for (const app of opened) await app.close();
});

/** A server over the worker's database whose clock is `offsetMs` ahead. */
async function later(env: TestEnvironment, offsetMs: number) {
  const app = await startOwnApp({ ...env.deps, now: () => new Date(Date.now() + offsetMs) }, { accessLog: false });
  opened.push(app);
  return app;
}

async function membershipId(env: TestEnvironment, organizationId: string, userId: string): Promise<string> {
  const list = await env.http.get(
    `/user_management/organization_memberships?organization_id=${organizationId}&user_id=${userId}`,
  );
  return list.body.data[0].id;
}

describe('client token refusals on every client surface', () => {
  it('a fresh widget token and client token are accepted everywhere (the baseline)', async () => {
    const env = await newEnvironment();
    expect(await surfaces(env.world.url, (await clientSetup(env)).token)).toEqual(OK);
    expect(await surfaces(env.world.url, (await clientSetup(env, { kind: 'client' })).token)).toEqual(OK);
  });

  it('an expired token (the clock past its exp) is 403', async () => {
    const env = await newEnvironment();
    const { token, claims } = await clientSetup(env);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(900);
    const after = await later(env, 16 * 60_000);
    expect(await surfaces(after.url, token)).toEqual(REFUSED);
  });

  it('a token of a revoked session is 403 at once', async () => {
    const env = await newEnvironment();
    const { token, claims } = await clientSetup(env, { kind: 'client' });
    await sdkFor(env).userManagement.revokeSession({ sessionId: String(claims.sid) });
    expect(await surfaces(env.world.url, token)).toEqual(REFUSED);
  });

  it('a token whose membership was deactivated, or removed, is 403 at once', async () => {
    const env = await newEnvironment();
    const deactivated = await clientSetup(env);
    const id = await membershipId(env, deactivated.organizationId, deactivated.userId);
    expect((await env.http.put(`/user_management/organization_memberships/${id}/deactivate`, {})).status).toBe(200);
    expect(await surfaces(env.world.url, deactivated.token)).toEqual(REFUSED);

    const removed = await clientSetup(env, { kind: 'client' });
    const other = await membershipId(env, removed.organizationId, removed.userId);
    expect((await env.http.delete(`/user_management/organization_memberships/${other}`)).status).toBe(204);
    expect(await surfaces(env.world.url, removed.token)).toEqual(REFUSED);
  });

  it('a token moved to another environment, or with a tampered payload or signature, is 403', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const { token, claims } = await clientSetup(other);
    const [head, body, sig] = token.split('.') as [string, string, string];
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const moved = `${head}.${encode({ ...claims, aud: `${env.clientId}:client_api` })}.${sig}`;
    expect(await surfaces(env.world.url, moved)).toEqual(REFUSED);
    const widened = `${head}.${encode({ ...claims, permissions: [...ALL_WIDGET_SCOPES, 'widgets:pipes:manage'] })}.${sig}`;
    expect(await surfaces(other.world.url, widened)).toEqual(REFUSED);
    const flipped = `${head}.${body}.${sig.slice(0, -4)}${sig.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    expect(await surfaces(other.world.url, flipped)).toEqual(REFUSED);
    const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${body}.`;
    expect(await surfaces(other.world.url, unsigned)).toEqual(REFUSED);
    // The untouched token still works where it belongs.
    expect(await surfaces(other.world.url, token)).toEqual(OK);
  });

  it('an API key, an admin token and an agent access token are not client tokens: 403', async () => {
    const env = await newEnvironment();
    expect(await surfaces(env.world.url, env.apiKey)).toEqual(REFUSED);
    expect(await surfaces(env.world.url, await adminTokenOf())).toEqual(REFUSED);
    const organization = await env.http.post('/organizations', { name: 'Agents Inc' });
    const agent = await (await adminCaller()).agents.register({
      environment: env.environmentId,
      organization_id: organization.body.id,
      userland_user_id: 'user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    });
    expect(agent.access_token.split('.')).toHaveLength(3);
    expect(await surfaces(env.world.url, agent.access_token)).toEqual(REFUSED);
  });

  it('a client or widget token on the API-key REST routes and on admin.* is 401', async () => {
    const env = await newEnvironment();
    for (const setup of [await clientSetup(env), await clientSetup(env, { kind: 'client' })]) {
      const http = new HttpClient(env.world.url, { Authorization: `Bearer ${setup.token}` });
      for (const path of ['/organizations', `/organizations/${setup.organizationId}`, '/user_management/users']) {
        const res = await http.get(path);
        expect(res.status, path).toBe(401);
        expect(res.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      }
      expect((await http.post('/organizations', { name: 'Not with a client token' })).status).toBe(401);
      expect((await http.get('/trpc/organizations.list')).status).toBe(401);
      expect((await http.get('/trpc/admin.environments.list')).status).toBe(401);
    }
  });
});

describe('widget token expiry and refresh', () => {
  it('a token fetched later expires later; the old one works until its own exp', async () => {
    const env = await newEnvironment();
    const first = await clientSetup(env);
    const tenMinutes = await later(env, 10 * 60_000);
    const refreshed = await new HttpClient(tenMinutes.url, { Authorization: `Bearer ${env.apiKey}` }).post(
      '/widgets/token',
      { organization_id: first.organizationId, user_id: first.userId, scopes: ALL_WIDGET_SCOPES },
    );
    expect(refreshed.status).toBe(201);
    const second: string = refreshed.body.token;
    const claims = decodeJwt(second);
    expect(Number(claims.exp) - Number(first.claims.exp)).toBeGreaterThanOrEqual(599);
    expect(claims.sid).not.toBe(first.claims.sid);
    // Ten minutes on, both work.
    expect(await surfaces(tenMinutes.url, first.token)).toEqual(OK);
    expect(await surfaces(tenMinutes.url, second)).toEqual(OK);
    // Sixteen minutes on, the first has expired and the refreshed one still works.
    const sixteen = await later(env, 16 * 60_000);
    expect(await surfaces(sixteen.url, first.token)).toEqual(REFUSED);
    expect(await surfaces(sixteen.url, second)).toEqual(OK);
  });
});
