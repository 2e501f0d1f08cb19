// The SAML sign-in in headless Chromium: the app's sign-in link (SDK getAuthorizationUrl) ->
// /sso/authorize -> the loopback IdP's login page, filled in and submitted by clicking -> the
// IdP's auto-submitted POST to the ACS -> the app's redirect URI with a code, which the app
// exchanges with the SDK's getProfileAndToken and shows. Skipped (with the reason) without Chromium.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '@atrium/rest-facade';
import { configureSamlConnection, type Deps, scopeOf } from '@atrium/routers';
import { type DevIdp, startDevIdp } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../helpers/browser.ts';
import { getWorld, newEnvironment } from '../../helpers/world.ts';
import { organizationWithConnection } from '../flows.ts';

let browser: Browser | undefined;
let skipReason = '';
let deps: Deps;
let server: Server;
let url: string;
let idp: DevIdp;

async function listen(s: Server): Promise<string> {
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const launched = await launchChromium();
  if (!launched.browser) {
    skipReason = launched.reason;
    return;
  }
  browser = launched.browser;
  // The server as `npm start` runs it: the ACS and the SP entity id name its own base URL.
  const world = await getWorld();
  deps = Object.assign({}, world.deps, { tokens: Object.assign({}, world.deps.tokens) });
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  url = await listen(server);
  deps.tokens.issuer = url;
  idp = await startDevIdp();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await idp?.close();
  server?.closeAllConnections();
  server?.close();
});

describe('SAML sign-in in Chromium', () => {
  it('clicks through the IdP login form and lands in the app with a profile', async (ctx) => {
    if (!browser) {
      ctx.skip(skipReason);
      return;
    }
    const env = await newEnvironment();
    const { domain, organization, connection } = await organizationWithConnection(env, {
      connectionType: 'GenericSAML',
      name: 'Acme SAML',
      domainPrefix: 'chromium',
    });
    await configureSamlConnection(await scopeOf(deps, env.environmentId), connection.id, {
      idp_metadata_url: idp.metadataUrl,
    });
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });

    // The app: its callback exchanges the code with the SDK and shows who signed in.
    const app = createServer((req, res) => {
      const at = new URL(req.url ?? '/', 'http://app');
      const code = at.searchParams.get('code');
      if (at.pathname !== '/callback' || !code) {
        res.writeHead(400, { 'Content-Type': 'text/html' });
        res.end(`<h1>No code</h1><p>${at.searchParams.get('error') ?? ''}</p>`);
        return;
      }
      workos.sso.getProfileAndToken({ code, clientId: env.clientId }).then(
        ({ profile }) => {
          res.writeHead(200, { 'Content-Type': 'text/html' });
          res.end(
            `<h1>Signed in</h1><p id="who">${profile.email} ${profile.organizationId} ${at.searchParams.get('state')}</p>`,
          );
        },
        (error: Error) => {
          res.writeHead(500, { 'Content-Type': 'text/html' });
          res.end(`<h1>Exchange failed</h1><p>${error.message}</p>`);
        },
      );
    });
    const appUrl = await listen(app);
    try {
      const created = await fetch(`${url}/user_management/redirect_uris`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${env.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ uri: `${appUrl}/callback` }),
      });
      expect(created.status).toBeLessThan(300);
      const signInUrl = workos.sso.getAuthorizationUrl({
        connection: connection.id,
        redirectUri: `${appUrl}/callback`,
        state: 'browser-state',
        clientId: env.clientId,
      });

      const page = await browser.newPage();
      await page.goto(signInUrl);
      expect(page.url().startsWith(idp.ssoUrl)).toBe(true);
      await page.fill('input[name="email"]', `grace@${domain}`);
      await page.fill('input[name="first_name"]', 'Grace');
      await page.fill('input[name="last_name"]', 'Hopper');
      await Promise.all([page.waitForURL(`${appUrl}/callback?**`), page.click('button[type="submit"]')]);
      await page.waitForSelector('#who');
      expect(await page.textContent('#who')).toBe(`grace@${domain} ${organization.id} browser-state`);
      await page.close();
    } finally {
      app.closeAllConnections();
      app.close();
    }
  });
});
