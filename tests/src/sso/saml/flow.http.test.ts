// The whole SAML sign-in over HTTP: the app's authorization URL (SDK), the IdP's login page and
// form, the signed response posted to the ACS, the code at the app's redirect URI, and the SDK's
// getProfileAndToken. The IdP and the server read the same (wall) clock here: it is a live flow.
import { type DevIdp, startDevIdp } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkFor } from '../../helpers/sdk.ts';
import { getWorld, newEnvironment } from '../../helpers/world.ts';
import { samlOrganization, signInAtIdp } from '../flows.ts';
import { APP_CALLBACK } from '../sign-in.ts';

let idp: DevIdp;
beforeAll(async () => {
  idp = await startDevIdp();
  await getWorld(); // the worker's database, migrated once: not the test's time
});
afterAll(async () => {
  await idp.close();
});

describe('SAML sign-in over HTTP, end to end', () => {
  it('app -> /sso/authorize -> IdP login -> ACS -> redirect_uri with a code -> getProfileAndToken', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection } = await samlOrganization(env, idp);
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
    expect(location.startsWith(`${idp.ssoUrl}?`)).toBe(true);
    const email = `ada@${domain}`;
    const acs = await signInAtIdp(location, email);
    expect(new URL(acs.action).pathname).toBe(`/sso/saml/acs/${connection.id}`);
    expect(acs.fields.RelayState).toMatch(/^sso_authorization_/);
    const posted = await fetch(`${env.world.url}/sso/saml/acs/${connection.id}`, {
      method: 'POST',
      body: new URLSearchParams(acs.fields),
      redirect: 'manual',
    });
    expect(posted.status).toBe(302);
    const back = new URL(posted.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(APP_CALLBACK);
    expect(back.searchParams.get('state')).toBe('app-state-1');
    const code = back.searchParams.get('code') ?? '';
    expect(code).not.toBe('');

    const { profile, accessToken } = await workos.sso.getProfileAndToken({ code, clientId: env.clientId });
    expect(accessToken).toEqual(expect.any(String));
    expect(profile).toMatchObject({
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      connectionId: connection.id,
      connectionType: 'OktaSAML',
      organizationId: organization.id,
      idpId: email,
    });

    // The same response posted again is a replay: refused, and no second code.
    const again = await fetch(`${env.world.url}/sso/saml/acs/${connection.id}`, {
      method: 'POST',
      body: new URLSearchParams(acs.fields),
      redirect: 'manual',
    });
    const refusedAt = again.headers.get('location');
    if (refusedAt) expect(new URL(refusedAt).searchParams.get('code')).toBeNull();
    else expect(again.status).toBeGreaterThanOrEqual(400);
  });
});
