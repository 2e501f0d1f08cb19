// The whole OpenID Connect sign-in over HTTP: the app's authorization URL (SDK), /sso/authorize,
// the loopback provider's login form, the callback, the code at the app's redirect URI, and the
// SDK's getProfileAndToken. The provider and the server read the same (wall) clock: a live flow.
import { events, ssoAuthorizations } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OidcIdp } from '../../helpers/oidc-idp.ts';
import { sdkFor } from '../../helpers/sdk.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../../helpers/world.ts';
import { oidcOrganization as sharedOidcOrganization, ssoEvents } from '../flows.ts';
import { APP_CALLBACK } from '../sign-in.ts';
import { redirectUriOf } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined), 120_000);

const idps: OidcIdp[] = [];
afterEach(async () => {
  await Promise.all(idps.splice(0).map((idp) => idp.close()));
});

/** An OIDC connection to a fresh loopback provider, its redirect URI from the world's issuer. */
const oidcOrganization = (env: TestEnvironment) =>
  sharedOidcOrganization(env, idps, (connectionId) => redirectUriOf(env.deps, connectionId));

/** The provider's callback, delivered to this server (the redirect URI names the public issuer). */
function onServer(env: TestEnvironment, callback: URL): string {
  return `${env.world.url}${callback.pathname}${callback.search}`;
}

describe('OIDC sign-in over HTTP, end to end', () => {
  it('app -> /sso/authorize -> provider login -> callback -> redirect_uri with a code -> getProfileAndToken', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection, idp } = await oidcOrganization(env);
    const workos = sdkFor(env);
    const authorizationUrl = workos.sso.getAuthorizationUrl({
      connection: connection.id,
      redirectUri: APP_CALLBACK,
      state: 'app-state-1',
      clientId: env.clientId,
    });
    const toIdp = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(toIdp.status).toBe(302);
    const location = toIdp.headers.get('location') ?? '';
    expect(location.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const request = new URL(location);
    expect(request.searchParams.get('state')).toMatch(/^sso_authorization_/);
    expect(request.searchParams.get('code_challenge_method')).toBe('S256');

    const callback = await idp.signIn(location, 'ada');
    expect(callback.pathname).toBe(`/sso/oidc/callback/${connection.id}`);
    const answered = await fetch(onServer(env, callback), { redirect: 'manual' });
    expect(answered.status).toBe(302);
    const back = new URL(answered.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(APP_CALLBACK);
    expect(back.searchParams.get('state')).toBe('app-state-1');
    const code = back.searchParams.get('code') ?? '';
    expect(code).not.toBe('');

    const { profile, accessToken } = await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
    expect(accessToken).toEqual(expect.any(String));
    expect(profile).toMatchObject({
      email: `ada@${domain}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      connectionId: connection.id,
      connectionType: 'OktaOIDC',
      organizationId: organization.id,
      idpId: 'ada',
    });
    expect(profile.rawAttributes).toMatchObject({ sub: 'ada', iss: idp.issuer, email: `ada@${domain}` });
    const recorded = await ssoEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['authentication.sso_started', 'authentication.sso_succeeded']);
    expect(JSON.stringify(recorded)).not.toContain(idp.clientSecret);

    // The same callback again: the authorization is spent and the code too; no second code.
    const again = await fetch(onServer(env, callback), { redirect: 'manual' });
    const refusedAt = again.headers.get('location');
    if (refusedAt) expect(new URL(refusedAt).searchParams.get('code')).toBeNull();
    else expect(again.status).toBeGreaterThanOrEqual(400);
  });

  it('a tampered id_token ends at the app with the error and its reason, the failure evented without secrets', async () => {
    const env = await newEnvironment();
    const { connection, idp } = await oidcOrganization(env);
    const workos = sdkFor(env);
    const url = workos.sso.getAuthorizationUrl({
      connection: connection.id,
      redirectUri: APP_CALLBACK,
      state: 'app-state-2',
      clientId: env.clientId,
    });
    const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const callback = await idp.signIn(location, 'eve');
    idp.tamper = { claims: { aud: 'another-client' } };
    const answered = await fetch(onServer(env, callback), { redirect: 'manual' });
    expect(answered.status).toBe(302);
    const back = new URL(answered.headers.get('location') ?? '');
    expect(back.searchParams.get('error')).toBe('audience_mismatch');
    expect(back.searchParams.get('state')).toBe('app-state-2');
    expect(back.searchParams.get('code')).toBeNull();
    const [authorization] = await env.deps.db
      .select()
      .from(ssoAuthorizations)
      .where(eq(ssoAuthorizations.environmentId, env.environmentId));
    expect(authorization).toMatchObject({ state: 'failed', failureReason: 'audience_mismatch' });
    const recorded = await ssoEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['authentication.sso_started', 'authentication.sso_failed']);
    const serialized = JSON.stringify(recorded);
    expect(serialized).toContain('audience_mismatch');
    expect(serialized).not.toContain(idp.clientSecret);
    expect(serialized).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });

  it('a callback for an expired authorization gives no code', async () => {
    const env = await newEnvironment();
    const { connection, idp } = await oidcOrganization(env);
    const workos = sdkFor(env);
    const url = workos.sso.getAuthorizationUrl({
      connection: connection.id,
      redirectUri: APP_CALLBACK,
      state: 'app-state-3',
      clientId: env.clientId,
    });
    const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const callback = await idp.signIn(location, 'slow');
    const authorizationId = callback.searchParams.get('state') ?? '';
    await env.deps.db
      .update(ssoAuthorizations)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(ssoAuthorizations.id, authorizationId));
    const answered = await fetch(onServer(env, callback), { redirect: 'manual' });
    // Back to the app with the refusal, the code never exchanged at the provider.
    expect(answered.status).toBe(302);
    const refusedAt = new URL(answered.headers.get('location') ?? '');
    expect(refusedAt.searchParams.get('code')).toBeNull();
    expect(refusedAt.searchParams.get('error')).toBe('authorization_expired');
    expect(refusedAt.searchParams.get('state')).toBe('app-state-3');
    const [authorization] = await env.deps.db
      .select()
      .from(ssoAuthorizations)
      .where(eq(ssoAuthorizations.id, authorizationId));
    expect(authorization).toMatchObject({ state: 'timed_out', failureReason: 'authorization_expired' });
    const stored = await env.deps.db.select().from(events).where(eq(events.environmentId, env.environmentId));
    expect(stored.map((e) => e.event)).toContain('authentication.sso_timed_out');
    expect(stored.map((e) => e.event)).not.toContain('authentication.sso_failed');
  });
});
