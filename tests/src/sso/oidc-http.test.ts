import { configureOidcConnection } from '@atrium/routers';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import type { OidcIdp } from '../helpers/oidc-idp.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld } from '../helpers/world.ts';
import { type OidcSetup, oidcSetup } from './oidc/helpers.ts';
import { APP_CALLBACK, registerRedirectUri } from './sign-in.ts';

// The OpenID Connect sign-in end to end through the SSO codec: the SDK's authorization URL, the
// loopback provider's login, `GET /sso/oidc/callback/:connection_id`, the app's code, the profile.

beforeAll(() => getWorld().then(() => undefined), 120_000);

const idps: OidcIdp[] = [];
afterEach(async () => {
  await Promise.all(idps.splice(0).map((idp) => idp.close()));
});

async function configured(): Promise<OidcSetup> {
  const s = await oidcSetup();
  idps.push(s.idp);
  await configureOidcConnection(s.scope, s.connectionId, {
    discovery_endpoint: s.idp.discoveryEndpoint,
    client_id: s.idp.clientId,
    client_secret: s.idp.clientSecret,
  });
  await s.env.caller.organizations.update({
    id: s.organizationId,
    domain_data: [{ domain: 'example.com', state: 'verified' }],
  });
  await registerRedirectUri(s.env);
  return s;
}

/** The provider's callback URL, sent to this worker's server (the issuer has no port). */
const onServer = (s: OidcSetup, callback: URL) => `${s.env.world.url}${callback.pathname}${callback.search}`;

describe('OIDC through GET /sso/oidc/callback/:connection_id', () => {
  it('signs in, lands on the app with a code, and the SDK gets the profile; the connection activates', async () => {
    const s = await configured();
    const workos = sdkFor(s.env);
    const url = workos.sso.getAuthorizationUrl({
      connection: s.connectionId,
      clientId: s.env.clientId,
      redirectUri: APP_CALLBACK,
      state: 'oidc-state',
    });
    const started = await fetch(url, { redirect: 'manual' });
    expect(started.status).toBe(302);
    const callback = await s.idp.signIn(started.headers.get('location') ?? '', 'ada.lovelace');
    const res = await fetch(onServer(s, callback), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const landed = new URL(res.headers.get('location') ?? '');
    expect(`${landed.origin}${landed.pathname}`).toBe(APP_CALLBACK);
    expect(landed.searchParams.get('state')).toBe('oidc-state');
    const { profile } = await workos.sso.getProfileAndToken({
      code: landed.searchParams.get('code') ?? '',
      clientId: s.env.clientId,
    });
    expect(profile).toMatchObject({
      connectionId: s.connectionId,
      connectionType: 'GenericOIDC',
      organizationId: s.organizationId,
      email: 'ada.lovelace@example.com',
      firstName: 'ada',
    });
    expect(await storedEventData(s.env, 'connection.activated')).toHaveLength(1);
    expect(await storedEventData(s.env, 'authentication.sso_succeeded')).toHaveLength(1);

    // The same callback again: the authorization is spent, the browser gets the error page.
    const replay = await fetch(onServer(s, callback), { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('a callback naming no authorization of the connection is refused on the error page', async () => {
    const s = await configured();
    const res = await fetch(
      `${s.env.world.url}/sso/oidc/callback/${s.connectionId}?code=x&state=sso_authorization_01NOPE`,
      {
        redirect: 'manual',
      },
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('state_mismatch');
    expect(await storedEventData(s.env, 'authentication.sso_failed')).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'state_mismatch' }) }),
    ]);
  });

  it("the provider's error goes back to the app with the state", async () => {
    const s = await configured();
    const url = sdkFor(s.env).sso.getAuthorizationUrl({
      connection: s.connectionId,
      clientId: s.env.clientId,
      redirectUri: APP_CALLBACK,
      state: 's2',
    });
    const started = await fetch(url, { redirect: 'manual' });
    const state = new URL(started.headers.get('location') ?? '').searchParams.get('state') ?? '';
    const res = await fetch(
      `${s.env.world.url}/sso/oidc/callback/${s.connectionId}?error=access_denied&error_description=denied&state=${state}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location') ?? '');
    expect(back.searchParams.get('error')).toBe('idp_access_denied');
    expect(back.searchParams.get('state')).toBe('s2');
  });
});
