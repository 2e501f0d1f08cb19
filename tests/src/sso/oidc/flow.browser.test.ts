// The OpenID Connect sign-in in headless Chromium: an app's login link -> /sso/authorize -> the
// loopback provider's login page (typed into and submitted by the browser) -> the callback ->
// the app's redirect URI, whose backend spends the code with the SDK's getProfileAndToken and
// shows who signed in. Loopback only: every request off loopback is refused and listed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '@atrium/rest-facade';
import { configureOidcConnection, type Deps } from '@atrium/routers';
import { WorkOS } from '@workos-inc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, listen, openPage } from '../../helpers/browser.ts';
import { type OidcIdp, startOidcIdp } from '../../helpers/oidc-idp.ts';
import { getWorld, newEnvironment } from '../../helpers/world.ts';
import { organizationWithConnection } from '../flows.ts';
import { registerRedirectUri } from '../sign-in.ts';
import { scopeOf } from './helpers.ts';

const launched = await launchChromium();

/** Atrium on its own port, its public URL (`issuer`) being that port: the browser follows its redirect URIs. */
let atrium: { url: string; deps: Deps; server: Server };
let idp: OidcIdp | undefined;
let app: { url: string; close(): Promise<void> } | undefined;

beforeAll(async () => {
  if (!launched.browser) return;
  const world = await getWorld();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deps: Deps = Object.assign({}, world.deps, { tokens: Object.assign({}, world.deps.tokens, { issuer: url }) });
  server.on('request', createApp(deps, { baseUrl: url, rateLimit: false }).handler);
  atrium = { url, deps, server };
});

afterAll(async () => {
  await launched.browser?.close();
  await idp?.close();
  await app?.close();
  if (atrium) {
    atrium.server.closeAllConnections();
    await new Promise<void>((resolve) => atrium.server.close(() => resolve()));
  }
});

describe.skipIf(!launched.browser)('OIDC sign-in in Chromium', () => {
  it('app -> /sso/authorize -> provider login page -> callback -> app redirect_uri -> getProfileAndToken', async () => {
    const env = await newEnvironment();
    const { domain, organization, connection } = await organizationWithConnection(env, {
      connectionType: 'EntraIdOIDC',
      name: 'Acme Entra ID',
      domainPrefix: 'oidc-browser',
    });
    idp = await startOidcIdp({
      redirectUris: [`${atrium.url}/sso/oidc/callback/${connection.id}`],
      claimsOf: (login) => ({ email: `${login}@${domain}`, given_name: 'Grace', family_name: 'Hopper' }),
    });
    await configureOidcConnection(scopeOf(env, atrium.deps), connection.id, {
      discovery_endpoint: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
    });

    // The app: a login link and a backend at its redirect URI, with the official SDK.
    const atriumUrl = new URL(atrium.url);
    const workos = new WorkOS(env.apiKey, {
      apiHostname: atriumUrl.hostname,
      port: Number(atriumUrl.port),
      https: false,
      clientId: env.clientId,
    });
    let appUrl = '';
    const signedIn: Record<string, unknown>[] = [];
    app = await listen((req, res) => {
      const url = new URL(req.url ?? '/', appUrl);
      if (url.pathname === '/login') {
        const location = workos.sso.getAuthorizationUrl({
          connection: connection.id,
          redirectUri: `${appUrl}/callback`,
          state: 'browser-state',
          clientId: env.clientId,
        });
        res.writeHead(302, { location }).end();
        return;
      }
      if (url.pathname === '/callback') {
        const code = url.searchParams.get('code');
        if (!code) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(`error: ${url.searchParams.get('error')}`);
          return;
        }
        workos.sso.getProfileAndToken({ code, clientId: env.clientId }).then(
          ({ profile }) => {
            signedIn.push({ state: url.searchParams.get('state'), profile });
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
            res.end(`<!doctype html><title>App</title><p id="who">Signed in as ${profile.email}</p>`);
          },
          (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
        );
        return;
      }
      res.writeHead(404).end();
    });
    appUrl = app.url;
    await registerRedirectUri(env, `${appUrl}/callback`);

    const opened = await openPage(launched.browser!, atrium.url);
    await opened.page.goto(`${appUrl}/login`);
    await opened.page.waitForURL((url) => url.href.startsWith(`${idp?.issuer}/interaction/`));
    await opened.page.getByLabel('Login').fill('grace');
    // The click's navigation runs the whole back half (callback, code exchange, the app's
    // getProfileAndToken): slow on a loaded machine, so it gets its own, longer bound.
    await opened.page.getByRole('button', { name: 'Sign in' }).click({ timeout: 60_000 });
    await opened.page.waitForURL((url) => url.href.startsWith(`${appUrl}/callback`), { timeout: 60_000 });
    await expect.poll(() => opened.page.locator('#who').textContent()).toBe(`Signed in as grace@${domain}`);
    expect(signedIn).toEqual([
      {
        state: 'browser-state',
        profile: expect.objectContaining({
          email: `grace@${domain}`,
          firstName: 'Grace',
          lastName: 'Hopper',
          idpId: 'grace',
          connectionId: connection.id,
          connectionType: 'EntraIdOIDC',
          organizationId: organization.id,
        }),
      },
    ]);
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
    expect(opened.failed).toEqual([]);
  }, 180_000);
});
