import { events, redirectUris, ssoAccessTokens, ssoAuthorizations, ssoCodes } from '@atrium/db';
import { authenticateApiKey, hasAssertionId } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import { samlSetup, startTestIdp, testClock } from '../helpers/saml-idp.ts';
import { statementsOf } from '../helpers/statements.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';
import { APP_CALLBACK, registerRedirectUri } from './sign-in.ts';

// The SSO API over HTTP: redirect URIs, `GET /sso/authorize`, the SAML ACS through the SSO
// codec, `POST /sso/token`, `GET /sso/profile`, logout, and the SP metadata.

const clock = testClock(new Date());
let idp: Awaited<ReturnType<typeof startTestIdp>>;
beforeAll(async () => {
  idp = await startTestIdp(clock);
  // The worker's database and the first SAML configuration (key pair, x509) are not a test's time.
  await samlSetup(idp, clock);
}, 120_000);
afterAll(async () => {
  await idp.close();
});

const anonymous = (env: TestEnvironment) => new HttpClient(env.world.url);
const authorizationsOf = (env: TestEnvironment) =>
  env.deps.db.select().from(ssoAuthorizations).where(eq(ssoAuthorizations.environmentId, env.environmentId));
const redirectUrisOf = (env: TestEnvironment) =>
  env.deps.db.select().from(redirectUris).where(eq(redirectUris.environmentId, env.environmentId));

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

async function noFollow(url: string, init: RequestInit = {}) {
  return fetch(url, { ...init, redirect: 'manual' });
}

describe('POST /user_management/redirect_uris', () => {
  it('registers a URI in upstream shape; one default at a time; a duplicate is 409', async () => {
    const env = await newEnvironment();
    const first = await env.http.post('/user_management/redirect_uris', {
      uri: 'https://app.example.com/cb',
      default: true,
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      object: 'redirect_uri',
      id: expect.stringMatching(/^ruri_[0-9A-Z]{26}$/),
      uri: 'https://app.example.com/cb',
      default: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await env.http.post('/user_management/redirect_uris', {
      uri: 'http://localhost:3000/cb',
      default: true,
    });
    expect(second.status).toBe(201);
    const rows = await redirectUrisOf(env);
    expect(rows.filter((r) => r.isDefault).map((r) => r.uri)).toEqual(['http://localhost:3000/cb']);
    const duplicate = await env.http.post('/user_management/redirect_uris', { uri: 'https://app.example.com/cb' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('redirect_uri_already_exists');
    expect(await redirectUrisOf(env)).toHaveLength(2);
  });

  describe.each([
    ['http outside loopback', 'http://app.example.com/cb'],
    ['a fragment', 'https://app.example.com/cb#x'],
    ['a wildcard', 'https://*.example.com/cb'],
    ['a relative path', '/callback'],
    ['another scheme', 'javascript:alert(1)'],
    ['user info', 'https://user:pw@app.example.com/cb'],
  ])('refuses %s', (_label, uri) => {
    it('with 422 invalid_redirect_uri and nothing stored', async () => {
      const env = await newEnvironment();
      const res = await env.http.post('/user_management/redirect_uris', { uri });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_redirect_uri');
      expect(res.body.errors[0].field).toBe('uri');
      expect(await redirectUrisOf(env)).toHaveLength(0);
    });
  });

  it('accepts loopback http (127.0.0.1, [::1], *.localhost)', async () => {
    const env = await newEnvironment();
    for (const uri of ['http://127.0.0.1:8080/cb', 'http://[::1]/cb', 'http://app.localhost/cb']) {
      expect((await env.http.post('/user_management/redirect_uris', { uri })).status).toBe(201);
    }
  });
});

describe('GET /sso/authorize', () => {
  it('sends the browser to the IdP with RelayState = a stored authorization, and records sso_started', async () => {
    const setup = await samlSetup(idp, clock);
    const { env } = setup;
    await registerRedirectUri(env);
    const query = new URLSearchParams({
      client_id: env.clientId,
      response_type: 'code',
      redirect_uri: APP_CALLBACK,
      connection: setup.connectionId,
      state: 'xyz',
      login_hint: 'ada@example.com',
    });
    const res = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(idp.ssoUrl);
    const [authorization] = await authorizationsOf(env);
    expect(location.searchParams.get('RelayState')).toBe(authorization?.id);
    expect(authorization).toMatchObject({
      connectionId: setup.connectionId,
      redirectUri: APP_CALLBACK,
      appState: 'xyz',
      state: 'started',
      samlRequestId: expect.stringMatching(/^_/),
    });
    expect(await storedEventData(env, 'authentication.sso_started')).toEqual([
      {
        type: 'sso',
        status: 'started',
        // The browser's device: the loopback address and fetch's User-Agent.
        ip_address: '127.0.0.1',
        user_agent: 'node',
        user_id: null,
        email: 'ada@example.com',
        sso: { organization_id: setup.organizationId, connection_id: setup.connectionId, session_id: null },
      },
    ]);
  });

  it('picks the connection by organization, and the single default redirect URI when none is given', async () => {
    const setup = await samlSetup(idp, clock);
    const { env } = setup;
    await registerRedirectUri(env, 'https://app.example.com/default', true);
    const query = new URLSearchParams({
      client_id: env.clientId,
      response_type: 'code',
      organization: setup.organizationId,
    });
    const res = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    expect(res.status).toBe(302);
    expect((await authorizationsOf(env))[0]?.redirectUri).toBe('https://app.example.com/default');
  });

  const refusals: Array<
    [string, (s: Awaited<ReturnType<typeof samlSetup>>) => Record<string, string>, number, string]
  > = [
    [
      'an unregistered redirect_uri',
      (s) => ({ client_id: s.env.clientId, redirect_uri: 'https://evil.example.com/cb', connection: s.connectionId }),
      422,
      'invalid_redirect_uri',
    ],
    [
      'an unknown client_id',
      (s) => ({ client_id: 'client_nope', redirect_uri: APP_CALLBACK, connection: s.connectionId }),
      422,
      'invalid_client_id',
    ],
    [
      'no selector',
      (s) => ({ client_id: s.env.clientId, redirect_uri: APP_CALLBACK }),
      422,
      'invalid_request_parameters',
    ],
    [
      'two selectors',
      (s) => ({
        client_id: s.env.clientId,
        redirect_uri: APP_CALLBACK,
        connection: s.connectionId,
        organization: s.organizationId,
      }),
      422,
      'invalid_request_parameters',
    ],
    [
      'a provider Atrium cannot broker',
      (s) => ({ client_id: s.env.clientId, redirect_uri: APP_CALLBACK, provider: 'GoogleOAuth' }),
      422,
      'unsupported_connection_type',
    ],
    [
      'response_type other than code',
      (s) => ({
        client_id: s.env.clientId,
        redirect_uri: APP_CALLBACK,
        connection: s.connectionId,
        response_type: 'token',
      }),
      422,
      'invalid_request_parameters',
    ],
    [
      'a connection of another environment',
      () => ({ client_id: '', redirect_uri: APP_CALLBACK, connection: 'conn_01' }),
      422,
      'invalid_client_id',
    ],
  ];
  describe.each(refusals)('refuses %s', (_label, queryOf, status, code) => {
    it(`with a JSON ${status} ${code}, nothing stored`, async () => {
      const setup = await samlSetup(idp, clock);
      await registerRedirectUri(setup.env);
      const res = await noFollow(`${setup.env.world.url}/sso/authorize?${new URLSearchParams(queryOf(setup))}`);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await res.json()).code).toBe(code);
      expect(await authorizationsOf(setup.env)).toHaveLength(0);
      expect(await storedEventData(setup.env, 'authentication.sso_started')).toHaveLength(0);
    });
  });

  it('refuses an unconfigured connection, and takes an inactive configured one', async () => {
    const env = await newEnvironment();
    await registerRedirectUri(env);
    const organization = await env.caller.organizations.create({ name: 'Bare' });
    const { adminCaller } = await import('../helpers/tokens.ts');
    const bare = await (await adminCaller()).connections.create({
      environment: env.environmentId,
      organization_id: organization.id,
      connection_type: 'OktaSAML',
      name: 'Not configured',
      state: 'inactive',
    });
    const query = new URLSearchParams({ client_id: env.clientId, redirect_uri: APP_CALLBACK, connection: bare.id });
    const res = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('connection_not_configured');
  });
});

describe('the SAML sign-in through the ACS, then POST /sso/token and GET /sso/profile', () => {
  /** A connection set up for example.com, and an authorization started through `/sso/authorize`. */
  async function startSignIn(state?: string) {
    const setup = await samlSetup(idp, clock);
    const { env } = setup;
    await env.caller.organizations.update({
      id: setup.organizationId,
      domain_data: [{ domain: 'example.com', state: 'verified' }],
    });
    await registerRedirectUri(env);
    const query = new URLSearchParams({
      client_id: env.clientId,
      redirect_uri: APP_CALLBACK,
      connection: setup.connectionId,
      ...(state === undefined ? {} : { state }),
    });
    const started = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    const relayState = new URL(started.headers.get('location') ?? '').searchParams.get('RelayState') ?? '';
    const [authorization] = await authorizationsOf(env);
    return { setup, env, relayState, authorization };
  }

  async function signIn(state = 'app-state') {
    const { setup, env, relayState, authorization } = await startSignIn(state);
    const xml = await idp.loginResponse(
      setup.sp,
      { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', groups: ['Engineering'] },
      authorization?.samlRequestId ?? undefined,
    );
    const acs = await noFollow(`${env.world.url}/sso/saml/acs/${setup.connectionId}`, {
      method: 'POST',
      headers: FORM,
      body: form({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: relayState }),
    });
    return { setup, env, acs, xml, relayState };
  }

  it('lands on the app with a code and the state; the code buys the profile once; the token reads it', async () => {
    const { setup, env, acs } = await signIn();
    expect(acs.status).toBe(302);
    const landed = new URL(acs.headers.get('location') ?? '');
    expect(`${landed.origin}${landed.pathname}`).toBe(APP_CALLBACK);
    expect(landed.searchParams.get('state')).toBe('app-state');
    const code = landed.searchParams.get('code') ?? '';

    const http = anonymous(env);
    const token = await http.request('POST', '/sso/token', {
      raw: form({ client_id: env.clientId, client_secret: env.apiKey, grant_type: 'authorization_code', code }),
      headers: FORM,
    });
    expect(token.status).toBe(200);
    expect(token.body).toEqual({
      token_type: 'Bearer',
      access_token: expect.stringMatching(/^[0-9A-Za-z]{48}$/),
      expires_in: 3600,
      profile: {
        object: 'profile',
        id: expect.stringMatching(/^prof_/),
        idp_id: expect.any(String),
        organization_id: setup.organizationId,
        connection_id: setup.connectionId,
        connection_type: 'GenericSAML',
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        name: expect.any(String),
        role: { slug: expect.any(String) },
        roles: [{ slug: expect.any(String) }],
        groups: ['Engineering'],
        custom_attributes: expect.any(Object),
        raw_attributes: expect.any(Object),
      },
    });
    const stored = await env.deps.db
      .select()
      .from(ssoAccessTokens)
      .where(eq(ssoAccessTokens.environmentId, env.environmentId));
    expect(stored).toHaveLength(1);
    expect(stored[0]?.tokenHash).not.toBe(token.body.access_token);

    const again = await http.request('POST', '/sso/token', {
      raw: form({ client_id: env.clientId, client_secret: env.apiKey, grant_type: 'authorization_code', code }),
      headers: FORM,
    });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The code has expired or has already been used.',
      code: 'invalid_grant',
      message: 'The code has expired or has already been used.',
    });

    const profile = await http.get('/sso/profile', { Authorization: `Bearer ${token.body.access_token}` });
    expect(profile.status).toBe(200);
    expect(profile.body).toEqual(token.body.profile);
    const withKey = await http.get('/sso/profile', { Authorization: `Bearer ${env.apiKey}` });
    expect(withKey.status).toBe(401);
  });

  // POST /sso/token spends the code and stores the token in one statement (issue #37's bench).
  it('a code is spent once under concurrent exchanges, never past its expiry, never by another environment', async () => {
    const { env, acs } = await signIn();
    const code = new URL(acs.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const http = anonymous(env);
    const exchange = (client: { clientId: string; apiKey: string }, value = code) =>
      http.request('POST', '/sso/token', {
        raw: form({
          client_id: client.clientId,
          client_secret: client.apiKey,
          grant_type: 'authorization_code',
          code: value,
        }),
        headers: FORM,
      });
    const tokensOf = (environmentId: string) =>
      env.deps.db.select().from(ssoAccessTokens).where(eq(ssoAccessTokens.environmentId, environmentId));

    const other = await newEnvironment();
    const foreign = await exchange(other);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ error: 'invalid_grant' });
    expect(await tokensOf(other.environmentId)).toHaveLength(0);

    const [expiring] = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    await env.deps.db
      .update(ssoCodes)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(ssoCodes.codeHash, expiring?.codeHash ?? ''));
    const late = await exchange(env);
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ error: 'invalid_grant' });
    const [after] = await env.deps.db
      .select()
      .from(ssoCodes)
      .where(eq(ssoCodes.codeHash, expiring?.codeHash ?? ''));
    expect(after?.usedAt).toBeNull();
    expect(await tokensOf(env.environmentId)).toHaveLength(0);

    await env.deps.db
      .update(ssoCodes)
      .set({ expiresAt: new Date(Date.now() + 60_000) })
      .where(eq(ssoCodes.codeHash, expiring?.codeHash ?? ''));
    const all = await Promise.all(Array.from({ length: 5 }, () => exchange(env)));
    expect(all.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
    expect(await tokensOf(env.environmentId)).toHaveLength(1);
  });

  // Issue #37: an exchange (its API key cached) is one statement, spend, token and profile; the
  // profile read by its access token is one too.
  it('an exchange is one statement with the API key cached, GET /sso/profile one, and the answers are whole', async () => {
    const { setup, env, acs } = await signIn();
    const code = new URL(acs.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const http = anonymous(env);
    await authenticateApiKey(env.deps, `Bearer ${env.apiKey}`);
    const exchange = await statementsOf(env.deps.db, () =>
      http.request('POST', '/sso/token', {
        raw: form({ client_id: env.clientId, client_secret: env.apiKey, grant_type: 'authorization_code', code }),
        headers: FORM,
      }),
    );
    expect(exchange.result.status).toBe(200);
    expect(exchange.statements).toHaveLength(1);
    // The JIT membership has no role of its own: the environment's default role (`member`).
    expect(exchange.result.body.profile).toMatchObject({
      organization_id: setup.organizationId,
      connection_id: setup.connectionId,
      connection_type: 'GenericSAML',
      role: { slug: 'member' },
      roles: [{ slug: 'member' }],
      groups: ['Engineering'],
      name: 'Ada Lovelace',
    });
    const read = await statementsOf(env.deps.db, () =>
      http.get('/sso/profile', { Authorization: `Bearer ${exchange.result.body.access_token}` }),
    );
    expect(read.result.status).toBe(200);
    expect(read.result.body).toEqual(exchange.result.body.profile);
    expect(read.statements).toHaveLength(1);
  });

  it('GET /sso/profile refuses an access token past its hour with 401', async () => {
    const { env, acs } = await signIn();
    const http = anonymous(env);
    const code = new URL(acs.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const exchanged = await http.request('POST', '/sso/token', {
      raw: form({ client_id: env.clientId, client_secret: env.apiKey, grant_type: 'authorization_code', code }),
      headers: FORM,
    });
    const token = exchanged.body.access_token as string;
    const read = () => http.get('/sso/profile', { Authorization: `Bearer ${token}` });
    expect((await read()).status).toBe(200);
    await env.deps.db
      .update(ssoAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(ssoAccessTokens.environmentId, env.environmentId));
    const expired = await read();
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ code: 'unauthorized' });
  });

  it('refuses the same SAML response twice (the replay lands on the error page, no second code)', async () => {
    const { env, setup, xml, relayState } = await signIn();
    const replay = await noFollow(`${env.world.url}/sso/saml/acs/${setup.connectionId}`, {
      method: 'POST',
      headers: FORM,
      body: form({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: relayState }),
    });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await replay.text();
    expect(page).toMatch(/Reason: <code>[a-z_]+<\/code>/);
    expect(page).not.toContain('SAMLResponse');
    const codes = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    expect(codes).toHaveLength(1);
  });

  it('spends a response the domain policy refused: posted again once the domain is verified, it is a replay', async () => {
    const setup = await samlSetup(idp, clock);
    const { env } = setup;
    await registerRedirectUri(env);
    const query = new URLSearchParams({
      client_id: env.clientId,
      redirect_uri: APP_CALLBACK,
      connection: setup.connectionId,
      state: 'policy',
    });
    const started = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    const relayState = new URL(started.headers.get('location') ?? '').searchParams.get('RelayState') ?? '';
    const [authorization] = await authorizationsOf(env);
    const xml = await idp.loginResponse(
      setup.sp,
      { email: 'ada@example.com' },
      authorization?.samlRequestId ?? undefined,
    );
    const post = () =>
      noFollow(`${env.world.url}/sso/saml/acs/${setup.connectionId}`, {
        method: 'POST',
        headers: FORM,
        body: form({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: relayState }),
      });
    // example.com is no verified domain of the organization, which allows no profiles outside.
    const refused = await post();
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.get('location') ?? '').searchParams.get('error')).toBe('domain_not_allowed');
    const assertionId = /<saml:Assertion[^>]* ID="([^"]+)"/.exec(xml)?.[1] ?? '';
    expect(await hasAssertionId(env.deps.db, setup.connectionId, assertionId)).toBe(true);

    await env.caller.organizations.update({
      id: setup.organizationId,
      domain_data: [{ domain: 'example.com', state: 'verified' }],
    });
    const replay = await post();
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('Reason: <code>replayed_assertion</code>');
    const codes = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    expect(codes).toHaveLength(0);
    const failed = await storedEventData(env, 'authentication.sso_failed');
    expect(failed.map((data) => (data.error as { code: string }).code)).toEqual([
      'domain_not_allowed',
      'replayed_assertion',
    ]);
  });

  it('an ACS POST reads its connection and authorization in one statement; the rest is the sign-in transaction', async () => {
    const { setup, env, relayState, authorization } = await startSignIn();
    const xml = await idp.loginResponse(
      setup.sp,
      { email: 'ada@example.com' },
      authorization?.samlRequestId ?? undefined,
    );
    const { result: acs, statements } = await statementsOf(env.deps.db, () =>
      noFollow(`${env.world.url}/sso/saml/acs/${setup.connectionId}`, {
        method: 'POST',
        headers: FORM,
        body: form({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: relayState }),
      }),
    );
    expect(new URL(acs.headers.get('location') ?? '').searchParams.get('code')).toEqual(expect.any(String));
    // PostgreSQL: the statements outside a transaction only; PGlite: those before BEGIN.
    const begin = statements.indexOf('BEGIN');
    const outside = begin === -1 ? statements : statements.slice(0, begin);
    expect(outside).toHaveLength(1);
    expect(outside[0]).toMatch(/from "connections".*left join "sso_authorizations"/is);
    if (begin !== -1) {
      const inside = statements.slice(begin + 1);
      expect(inside.filter((text) => /insert into "saml_assertion_ids"/i.test(text))).toHaveLength(1);
      expect(inside.filter((text) => text === 'BEGIN')).toHaveLength(0);
    }
  });

  it('an IdP-initiated response is refused (off by default) on the error page, with sso_failed recorded', async () => {
    const setup = await samlSetup(idp, clock);
    const xml = await idp.loginResponse(setup.sp, { email: 'ada@example.com' });
    const res = await noFollow(`${setup.env.world.url}/sso/saml/acs/${setup.connectionId}`, {
      method: 'POST',
      headers: FORM,
      body: form({ SAMLResponse: Buffer.from(xml).toString('base64') }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('idp_initiated_disabled');
    const failed = await storedEventData(setup.env, 'authentication.sso_failed');
    expect(failed).toEqual([
      expect.objectContaining({ status: 'failed', error: expect.objectContaining({ code: 'idp_initiated_disabled' }) }),
    ]);
    expect(JSON.stringify(failed)).not.toContain('SAMLResponse');
  });

  it('a bad response with a known authorization goes back to the app with error and state', async () => {
    const { env, setup } = await (async () => {
      const s = await samlSetup(idp, clock);
      await registerRedirectUri(s.env);
      return { env: s.env, setup: s };
    })();
    const query = new URLSearchParams({
      client_id: env.clientId,
      redirect_uri: APP_CALLBACK,
      connection: setup.connectionId,
      state: 's9',
    });
    const started = await noFollow(`${env.world.url}/sso/authorize?${query}`);
    const relayState = new URL(started.headers.get('location') ?? '').searchParams.get('RelayState') ?? '';
    const res = await noFollow(`${env.world.url}/sso/saml/acs/${setup.connectionId}`, {
      method: 'POST',
      headers: FORM,
      body: form({ SAMLResponse: Buffer.from('<not-saml/>').toString('base64'), RelayState: relayState }),
    });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(APP_CALLBACK);
    expect(back.searchParams.get('error')).toMatch(/^[a-z_]+$/);
    expect(back.searchParams.get('state')).toBe('s9');
    expect((await authorizationsOf(env))[0]).toMatchObject({ state: 'failed' });
  });

  it('refuses a body over the SSO cap with 413', async () => {
    const setup = await samlSetup(idp, clock);
    const res = await noFollow(`${setup.env.world.url}/sso/saml/acs/${setup.connectionId}`, {
      method: 'POST',
      headers: FORM,
      body: form({ SAMLResponse: 'A'.repeat(600 * 1024) }),
    });
    expect(res.status).toBe(413);
  });

  it('serves the SP metadata as application/samlmetadata+xml', async () => {
    const setup = await samlSetup(idp, clock);
    const res = await fetch(`${setup.env.world.url}/sso/saml/metadata/${setup.connectionId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    expect(await res.text()).toContain(setup.sp.entityId);
    expect((await fetch(`${setup.env.world.url}/sso/saml/metadata/conn_01NOPE`)).status).toBe(404);
  });

  it('logout: POST /sso/logout/authorize, then GET /sso/logout ends the access tokens and goes to the default URI', async () => {
    const { env, acs } = await signIn();
    await registerRedirectUri(env, 'https://app.example.com/signed-out', true);
    const code = new URL(acs.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const http = anonymous(env);
    const token = await http.request('POST', '/sso/token', {
      raw: form({ client_id: env.clientId, client_secret: env.apiKey, grant_type: 'authorization_code', code }),
      headers: FORM,
    });
    const authorized = await env.http.post('/sso/logout/authorize', { profile_id: token.body.profile.id });
    expect(authorized.status).toBe(200);
    expect(authorized.body).toEqual({
      logout_url: expect.stringContaining('/sso/logout?token='),
      logout_token: expect.any(String),
    });
    const res = await noFollow(`${env.world.url}/sso/logout?token=${encodeURIComponent(authorized.body.logout_token)}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://app.example.com/signed-out');
    expect((await http.get('/sso/profile', { Authorization: `Bearer ${token.body.access_token}` })).status).toBe(401);
    const forged = await noFollow(`${env.world.url}/sso/logout?token=v1.AAAA.BBBB.CCCC`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('invalid_logout_token');
    const unknown = await env.http.post('/sso/logout/authorize', { profile_id: 'prof_01NOPE' });
    expect(unknown.status).toBe(404);
  });
});

describe('anonymous floods of the SSO paths', () => {
  it('are bounded by the unauthenticated rate limit', async () => {
    const env = await newEnvironment();
    const own = await startOwnApp(env.deps, {
      rateLimit: { requests: 100, windowSeconds: 60, organizationDeletes: 2, unauthenticated: 5 },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await noFollow(`${own.url}/sso/authorize?client_id=${env.clientId}&connection=conn_x`);
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 5).every((s) => s !== 429)).toBe(true);
      expect(statuses.slice(5)).toEqual([429, 429, 429]);
      const after = await env.deps.db
        .select()
        .from(events)
        .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'authentication.sso_started')));
      expect(after).toHaveLength(0);
    } finally {
      await own.close();
    }
  });
});
