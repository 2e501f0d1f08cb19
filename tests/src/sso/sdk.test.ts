import { ssoAuthorizations, ssoCodes } from '@atrium/db';
import { completeSignIn, loadConnection } from '@atrium/routers';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samlSetup, startTestIdp, testClock } from '../helpers/saml-idp.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { APP_CALLBACK, identity, registerRedirectUri } from './sign-in.ts';

// The official SDK's `sso` module against the server: the authorization URL it builds is
// accepted, and `getProfileAndToken` and `getProfile` work unchanged. The identity is completed
// through `completeSignIn` here (the SAML and OIDC tests run the real IdP flows).

const clock = testClock(new Date());
let idp: Awaited<ReturnType<typeof startTestIdp>>;
beforeAll(async () => {
  idp = await startTestIdp(clock);
  await samlSetup(idp, clock);
}, 120_000);
afterAll(async () => {
  await idp.close();
});

/** A configured connection, an authorization started through the SDK's URL, and its id. */
async function authorize(options: { state?: string } = {}) {
  const setup = await samlSetup(idp, clock);
  const { env } = setup;
  await env.caller.organizations.update({
    id: setup.organizationId,
    domain_data: [{ domain: 'example.com', state: 'verified' }],
  });
  await registerRedirectUri(env);
  const workos = sdkFor(env);
  const url = workos.sso.getAuthorizationUrl({
    connection: setup.connectionId,
    clientId: env.clientId,
    redirectUri: APP_CALLBACK,
    state: options.state ?? 'sdk-state',
    loginHint: 'ada@example.com',
  });
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const relayState = new URL(res.headers.get('location') ?? '').searchParams.get('RelayState') ?? '';
  return { setup, env, workos, relayState };
}

async function signedIn(options: { state?: string; email?: string } = {}) {
  const started = await authorize(options);
  const connection = await loadConnection(started.env.deps.db, started.env.environmentId, started.setup.connectionId);
  const { redirectUrl } = await completeSignIn(
    started.setup.scope,
    connection,
    started.relayState,
    identity(options.email ?? 'ada@example.com'),
  );
  const landed = new URL(redirectUrl);
  return { ...started, connection, landed, code: landed.searchParams.get('code') ?? '' };
}

async function rejection(promise: Promise<unknown>): Promise<{ status: number; data: Record<string, unknown> }> {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as { status?: number; rawData?: Record<string, unknown>; error?: string; errorDescription?: string } | undefined;
  expect(error).toBeDefined();
  return { status: error?.status ?? 0, data: (error?.rawData ?? {}) as Record<string, unknown> };
}

describe('the SDK sso module', () => {
  it('getAuthorizationUrl is accepted; getProfileAndToken and getProfile return the profile', async () => {
    const { setup, workos, env, landed, code } = await signedIn();
    expect(landed.searchParams.get('state')).toBe('sdk-state');
    const { profile, accessToken } = await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
    expect(accessToken).toMatch(/^[0-9A-Za-z]{48}$/);
    // The SDK's deserializer drops `object`.
    expect(profile).toMatchObject({
      id: expect.stringMatching(/^prof_/),
      idpId: 'idp-ada@example.com',
      organizationId: setup.organizationId,
      connectionId: setup.connectionId,
      connectionType: 'GenericSAML',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      groups: ['engineering'],
      customAttributes: { department: 'R&D' },
      rawAttributes: { email: 'ada@example.com', given_name: 'Ada', family_name: 'Lovelace', department: 'R&D' },
    });
    expect(profile.role?.slug).toEqual(expect.any(String));
    const again = await workos.sso.getProfile({ accessToken });
    expect(again).toEqual(profile);
  });
});

describe('SSO security', () => {
  it('a code is spent once (400 invalid_grant the second time)', async () => {
    const { workos, env, code } = await signedIn();
    await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
    const second = await rejection(workos.sso.getProfileAndToken({ code, clientId: env.clientId }));
    expect(second.status).toBe(400);
  });

  it('an expired code is refused', async () => {
    const { workos, env, code } = await signedIn();
    await env.deps.db
      .update(ssoCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(ssoCodes.environmentId, env.environmentId));
    const refused = await rejection(workos.sso.getProfileAndToken({ code, clientId: env.clientId }));
    expect(refused.status).toBe(400);
  });

  it("another environment cannot spend the code (and doesn't burn it)", async () => {
    const { workos, env, code } = await signedIn();
    const other = await newEnvironment();
    const refused = await rejection(sdkFor(other).sso.getProfileAndToken({ code, clientId: other.clientId }));
    expect(refused.status).toBe(400);
    // Nor with the other environment's key under this client id.
    const mixed = await rejection(sdkFor(other).sso.getProfileAndToken({ code, clientId: env.clientId }));
    expect(mixed.status).toBe(400);
    const { profile } = await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
    expect(profile.email).toBe('ada@example.com');
  });

  it('a wrong client secret is invalid_client, and the code stays unspent', async () => {
    const { workos, env, code } = await signedIn();
    const forged = new WorkOS(`sk_test_${'x'.repeat(40)}`, {
      apiHostname: '127.0.0.1',
      port: Number(new URL(env.world.url).port),
      https: false,
      clientId: env.clientId,
    });
    const refused = await rejection(forged.sso.getProfileAndToken({ code, clientId: env.clientId }));
    expect(refused.status).toBe(400);
    const [row] = await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId));
    expect(row?.usedAt).toBeNull();
    await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
  });

  it('an unregistered redirect_uri is refused before anything is stored', async () => {
    const setup = await samlSetup(idp, clock);
    await registerRedirectUri(setup.env);
    const url = sdkFor(setup.env).sso.getAuthorizationUrl({
      connection: setup.connectionId,
      clientId: setup.env.clientId,
      redirectUri: 'https://attacker.example.com/cb',
    });
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'invalid_redirect_uri' });
    const rows = await setup.env.deps.db
      .select()
      .from(ssoAuthorizations)
      .where(eq(ssoAuthorizations.environmentId, setup.env.environmentId));
    expect(rows).toHaveLength(0);
  });

  it("an access token reads only its own environment's profile; an API key is not an access token", async () => {
    const a = await signedIn();
    const { accessToken, profile } = await a.workos.sso.getProfileAndToken({ code: a.code, clientId: a.env.clientId });
    const b: TestEnvironment = await newEnvironment();
    // The profile an access token names is the one it was issued for, whoever asks.
    expect((await sdkFor(b).sso.getProfile({ accessToken })).id).toBe(profile.id);
    const withKey = await rejection(sdkFor(b).sso.getProfile({ accessToken: b.apiKey }));
    expect(withKey.status).toBe(401);
    const bogus = await rejection(a.workos.sso.getProfile({ accessToken: 'A'.repeat(48) }));
    expect(bogus.status).toBe(401);
  });

  it('a second completion of one authorization is refused, and issues no second code', async () => {
    const { setup, env, connection, relayState } = await signedIn();
    await expect(
      completeSignIn(setup.scope, connection, relayState, identity('ada@example.com')),
    ).rejects.toMatchObject({
      reason: 'authorization_already_used',
    });
    expect(await env.deps.db.select().from(ssoCodes).where(eq(ssoCodes.environmentId, env.environmentId))).toHaveLength(
      1,
    );
  });
});
