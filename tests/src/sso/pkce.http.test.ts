// PKCE at the SSO token exchange (RFC 7636, S256 only as upstream) and the device (ip_address,
// user_agent) of the `authentication.sso_*` events, over HTTP against the dev SAML IdP: the
// SDK's getAuthorizationUrlWithPKCE and getProfileAndToken({ codeVerifier }) as a public client
// (no API key) and as a confidential one, a wrong or missing verifier refused with the code left
// unspent, and a challenge method other than S256 refused before anything is stored.
import { createHash } from 'node:crypto';
import { ssoAuthorizations, ssoCodes } from '@atrium/db';
import { timeOutAuthorizations } from '@atrium/routers';
import { type DevIdp, startDevIdp } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { samlOrganization, signInAtIdp, ssoEvents } from './flows.ts';
import { APP_CALLBACK } from './sign-in.ts';

let idp: DevIdp;
beforeAll(async () => {
  idp = await startDevIdp();
  await getWorld();
}, 120_000);
afterAll(async () => {
  await idp.close();
});

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AtriumTest/1.0';

/** The SDK without an API key: a public client (a SPA or a native app) that holds only the verifier. */
function publicClient(env: TestEnvironment): WorkOS {
  const url = new URL(env.world.url);
  return new WorkOS({ apiHostname: url.hostname, port: Number(url.port), https: false, clientId: env.clientId });
}

/** Follows an authorization URL through the IdP and the ACS (as the browser `BROWSER`), returning the app's landing URL. */
async function signIn(env: TestEnvironment, connectionId: string, authorizationUrl: string, email: string) {
  const headers = { 'user-agent': BROWSER };
  const toIdp = await fetch(authorizationUrl, { redirect: 'manual', headers });
  expect(toIdp.status).toBe(302);
  const acs = await signInAtIdp(toIdp.headers.get('location') ?? '', email);
  const posted = await fetch(`${env.world.url}/sso/saml/acs/${connectionId}`, {
    method: 'POST',
    body: new URLSearchParams(acs.fields),
    redirect: 'manual',
    headers,
  });
  expect(posted.status).toBe(302);
  return new URL(posted.headers.get('location') ?? '');
}

/** A sign-in started with the SDK's PKCE URL: the code, the verifier and the app's state. */
async function pkceSignIn(env: TestEnvironment) {
  const { connection, domain, organization } = await samlOrganization(env, idp);
  const started = await sdkFor(env).sso.getAuthorizationUrlWithPKCE({
    connection: connection.id,
    clientId: env.clientId,
    redirectUri: APP_CALLBACK,
  });
  const [authorization] = await env.deps.db
    .select()
    .from(ssoAuthorizations)
    .where(eq(ssoAuthorizations.environmentId, env.environmentId));
  expect(authorization).toBeUndefined();
  const landed = await signIn(env, connection.id, started.url, `ada@${domain}`);
  expect(landed.searchParams.get('state')).toBe(started.state);
  const code = landed.searchParams.get('code') ?? '';
  expect(code).not.toBe('');
  return { ...started, code, connection, domain, organization };
}

/** `POST /sso/token` as a form, answering the status and the JSON body. */
async function token(env: TestEnvironment, fields: Record<string, string>) {
  const res = await fetch(`${env.world.url}/sso/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: env.clientId, ...fields }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function codeRow(env: TestEnvironment) {
  const [row] = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
  return row;
}

describe('PKCE at POST /sso/token', () => {
  it('a public client: getAuthorizationUrlWithPKCE, then getProfileAndToken with the verifier and no secret', async () => {
    const env = await newEnvironment();
    const { code, codeVerifier, connection, domain } = await pkceSignIn(env);
    const [authorization] = await env.deps.db
      .select()
      .from(ssoAuthorizations)
      .where(eq(ssoAuthorizations.environmentId, env.environmentId));
    expect(authorization?.codeChallenge).toBe(createHash('sha256').update(codeVerifier).digest('base64url'));
    expect((await codeRow(env))?.codeChallenge).toBe(authorization?.codeChallenge);

    const { profile, accessToken } = await publicClient(env).sso.getProfileAndToken({
      code,
      clientId: env.clientId,
      codeVerifier,
    });
    expect(profile).toMatchObject({ email: `ada@${domain}`, connectionId: connection.id });
    expect((await sdkFor(env).sso.getProfile({ accessToken })).id).toBe(profile.id);
    // Spent: the same code and verifier again is invalid_grant.
    const again = await token(env, { code, code_verifier: codeVerifier });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('a confidential client sends both the secret and the verifier (the SDK with an API key)', async () => {
    const env = await newEnvironment();
    const { code, codeVerifier } = await pkceSignIn(env);
    const { profile } = await sdkFor(env).sso.getProfileAndToken({ code, clientId: env.clientId, codeVerifier });
    expect(profile.email).toMatch(/^ada@/);
  });

  it('a wrong verifier and a missing one are invalid_grant, and leave the code unspent for the right one', async () => {
    const env = await newEnvironment();
    const { code, codeVerifier } = await pkceSignIn(env);
    const wrong = await token(env, {
      code,
      code_verifier: `${codeVerifier.slice(0, -1)}${codeVerifier.endsWith('A') ? 'B' : 'A'}`,
    });
    expect(wrong).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.any(String) },
    });
    const missing = await token(env, { code, client_secret: env.apiKey });
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const malformed = await token(env, { code, code_verifier: 'short' });
    expect(malformed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await codeRow(env))?.usedAt).toBeNull();
    const ok = await token(env, { code, code_verifier: codeVerifier });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', profile: { object: 'profile' } });
  });

  it('a code issued without a challenge: no secret is invalid_client, a verifier is invalid_grant', async () => {
    const env = await newEnvironment();
    const { connection, domain } = await samlOrganization(env, idp);
    const url = sdkFor(env).sso.getAuthorizationUrl({
      connection: connection.id,
      clientId: env.clientId,
      redirectUri: APP_CALLBACK,
    });
    const code = (await signIn(env, connection.id, url, `ada@${domain}`)).searchParams.get('code') ?? '';
    expect(await token(env, { code })).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    const verifier = 'v'.repeat(43);
    expect(await token(env, { code, code_verifier: verifier })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await token(env, { code, code_verifier: verifier, client_secret: env.apiKey })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect((await codeRow(env))?.usedAt).toBeNull();
    expect((await token(env, { code, client_secret: env.apiKey })).status).toBe(200);
  });

  it("a public client of another environment's client id cannot spend the code", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const { code, codeVerifier } = await pkceSignIn(env);
    const refused = await token(env, { code, code_verifier: codeVerifier, client_id: other.clientId });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await token(env, { code, code_verifier: codeVerifier, client_id: 'client_unknown' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_client' },
    });
    expect((await codeRow(env))?.usedAt).toBeNull();
  });

  describe.each([
    ['plain method', { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'code_challenge_method'],
    ['a challenge without its method', { code_challenge: 'x'.repeat(43) }, 'code_challenge_method'],
    ['a method without a challenge', { code_challenge_method: 'S256' }, 'code_challenge'],
    [
      'a challenge that is no S256 digest',
      { code_challenge: 'not+base64url', code_challenge_method: 'S256' },
      'code_challenge',
    ],
  ])('GET /sso/authorize refuses %s', (_name, pkce, fieldName) => {
    it('422 naming the field, nothing stored', async () => {
      const env = await newEnvironment();
      const { connection } = await samlOrganization(env, idp);
      const query = new URLSearchParams({
        client_id: env.clientId,
        connection: connection.id,
        redirect_uri: APP_CALLBACK,
        response_type: 'code',
        ...pkce,
      });
      const res = await fetch(`${env.world.url}/sso/authorize?${query}`, { redirect: 'manual' });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { code: string; errors?: Array<{ field: string }> };
      expect(body.code).toBe('invalid_request');
      expect(body.errors?.map((e) => e.field)).toEqual([fieldName]);
      const rows = await env.deps.db
        .select()
        .from(ssoAuthorizations)
        .where(eq(ssoAuthorizations.environmentId, env.environmentId));
      expect(rows).toHaveLength(0);
      expect(await ssoEvents(env)).toHaveLength(0);
    });
  });
});

describe('the device of the authentication.sso_* events', () => {
  const device = (data: unknown) => {
    const d = data as { ip_address: unknown; user_agent: unknown };
    return { ip_address: d.ip_address, user_agent: d.user_agent };
  };
  const browser = { ip_address: '127.0.0.1', user_agent: BROWSER };

  it('started and succeeded carry the browser address and User-Agent', async () => {
    const env = await newEnvironment();
    await pkceSignIn(env);
    const recorded = await ssoEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['authentication.sso_started', 'authentication.sso_succeeded']);
    for (const row of recorded) expect(device(row.data)).toEqual(browser);
  });

  it('failed carries the device of the request that brought the refused answer', async () => {
    const env = await newEnvironment();
    const { connection } = await samlOrganization(env, idp);
    const url = sdkFor(env).sso.getAuthorizationUrl({
      connection: connection.id,
      clientId: env.clientId,
      redirectUri: APP_CALLBACK,
    });
    const toIdp = await fetch(url, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
    const relayState = new URL(toIdp.headers.get('location') ?? '').searchParams.get('RelayState') ?? '';
    const posted = await fetch(`${env.world.url}/sso/saml/acs/${connection.id}`, {
      method: 'POST',
      body: new URLSearchParams({ SAMLResponse: Buffer.from('<nope/>').toString('base64'), RelayState: relayState }),
      redirect: 'manual',
      headers: { 'user-agent': 'Another/2.0' },
    });
    expect(new URL(posted.headers.get('location') ?? '').searchParams.get('error')).toEqual(expect.any(String));
    const recorded = await ssoEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['authentication.sso_started', 'authentication.sso_failed']);
    expect(device(recorded[0]?.data)).toEqual(browser);
    expect(device(recorded[1]?.data)).toEqual({ ip_address: '127.0.0.1', user_agent: 'Another/2.0' });
  });

  it('timed_out (the sweep, no request) carries the device that started the sign-in', async () => {
    const env = await newEnvironment();
    const { connection } = await samlOrganization(env, idp);
    const url = sdkFor(env).sso.getAuthorizationUrl({
      connection: connection.id,
      clientId: env.clientId,
      redirectUri: APP_CALLBACK,
    });
    expect((await fetch(url, { redirect: 'manual', headers: { 'user-agent': BROWSER } })).status).toBe(302);
    await env.deps.db
      .update(ssoAuthorizations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(ssoAuthorizations.environmentId, env.environmentId));
    await timeOutAuthorizations(env.deps);
    const recorded = await ssoEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['authentication.sso_started', 'authentication.sso_timed_out']);
    expect(device(recorded[1]?.data)).toEqual(browser);
  });
});
