import type { RequestListener } from 'node:http';
import { createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';
import { createSmtpMailer, type DevDnsServer, type DevSmtpServer, startDevDns, startDevSmtp } from '@atrium/server';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchChromium,
  listen,
  type OpenedPage,
  openPage,
  screenshot,
  serveWidgetPage,
  type WidgetPage,
} from '../helpers/browser.ts';
import { type ClientSetup, clientSetup } from '../helpers/client.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * The official @workos-inc/widgets 1.18 components, unchanged, in headless Chromium, against an
 * Atrium API on another loopback port (so every call is a real cross-origin request with its
 * preflight). Each step asserts what the page shows and what Atrium stored. The API's deps send
 * mail to a loopback SMTP server and run on a clock the tests move.
 */

const launched = await launchChromium();

let api: { url: string; close(): Promise<void> };
let page: WidgetPage;
let mailbox: DevSmtpServer;
let dns: DevDnsServer;
let deps: Deps;
/** How far the API's clock is ahead of the real one. */
const clockOffsetMs = 0;
/** What the page's token function answers, per test. */
let mint: (widget: string) => Promise<string> = async () => '';

// TEMPORARY until ATRIUM_CORS_ORIGINS lands on main: answers the preflight the widgets send.
function withCors(handler: RequestListener, origin: () => string): RequestListener {
  return (req, res) => {
    if (req.headers.origin === origin()) {
      res.setHeader('Access-Control-Allow-Origin', origin());
      res.setHeader('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE',
        'Access-Control-Allow-Headers':
          'Authorization, Content-Type, WorkOS-Widgets-Version, WorkOS-Widgets-Type, x-elevated-access-token',
        'Access-Control-Max-Age': '600',
      });
      res.end();
      return;
    }
    handler(req, res);
  };
}

beforeAll(async () => {
  if (!launched.browser) return;
  const world = await getWorld();
  mailbox = await startDevSmtp();
  dns = await startDevDns();
  deps = {
    ...world.deps,
    now: () => new Date(Date.now() + clockOffsetMs),
    mailer: createSmtpMailer({ url: mailbox.url, from: 'Acme <no-reply@acme.test>', timeoutMs: 5_000 }),
  };
  page = await serveWidgetPage((widget) => mint(widget));
  const app = createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false });
  api = await listen(withCors(app.handler, () => page.origin));
});

afterAll(async () => {
  await launched.browser?.close();
  await page?.close();
  await api?.close();
  await mailbox?.close();
  await dns?.close();
});

/** Opens the page with `widget`; fails the test if the page threw or reached past loopback. */
async function open(widget: string, params: Record<string, string> = {}): Promise<OpenedPage> {
  const opened = await openPage(launched.browser!, api.url);
  await opened.page.goto(page.url(widget, api.url, params));
  return opened;
}

async function closeClean(opened: OpenedPage): Promise<void> {
  await opened.close();
  expect(opened.outside).toEqual([]);
  expect(opened.pageErrors).toEqual([]);
  expect(opened.failed).toEqual([]);
}

async function addMembership(env: TestEnvironment, userId: string, name: string): Promise<string> {
  const org = await env.http.post('/organizations', { name });
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: userId,
    organization_id: org.body.id,
  });
  expect(membership.status).toBe(201);
  return org.body.id;
}

/** The visible text of the page. */
const textOf = (p: Page) => p.locator('body').innerText();

describe.skipIf(!launched.browser)('the official widgets in headless Chromium', () => {
  it("OrganizationSwitcher lists the caller's organizations, the token's current, and switching is the host's call", async () => {
    const env = await newEnvironment();
    const me: ClientSetup = await clientSetup(env);
    const orgName = (await env.http.get(`/organizations/${me.organizationId}`)).body.name as string;
    const zeta = await addMembership(env, me.userId, 'Zeta Corp');
    await addMembership(env, me.userId, 'Yankee Ltd');
    // Another user's organization is never listed.
    await clientSetup(env);
    mint = async () => me.token;

    const opened = await open('organization-switcher');
    const { page: p } = opened;
    // The trigger shows the current organization (the token's).
    const trigger = p.getByRole('button', { name: orgName });
    await trigger.waitFor();
    await screenshot(p, 'organization-switcher');
    await trigger.click();
    const menu = p.getByRole('menu');
    await menu.waitFor();
    const items = (await menu.getByRole('menuitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    // The current one first, marked; the others as the API ordered them.
    expect(items).toEqual([`${orgName} (current)`, 'Yankee Ltd', 'Zeta Corp']);
    await screenshot(p, 'organization-switcher-open');

    // What was stored: exactly the user's active memberships.
    const stored = await env.http.get(`/user_management/organization_memberships?user_id=${me.userId}&limit=100`);
    expect(stored.body.data.map((m: { organization_name: string }) => m.organization_name).sort()).toEqual(
      [orgName, 'Yankee Ltd', 'Zeta Corp'].sort(),
    );

    await menu.getByRole('menuitem', { name: 'Zeta Corp' }).click();
    await expect.poll(() => p.evaluate(() => (window as any).atrium.switched)).toEqual([zeta]);
    expect(opened.apiCalls).toContainEqual({
      method: 'GET',
      path: '/_widgets/UserManagement/organizations',
      status: 200,
    });
    await closeClean(opened);
  });

  it('a page on an origin the API does not allow gets nothing: the browser enforces CORS', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env);
    const stranger = await serveWidgetPage(async () => me.token);
    const opened = await openPage(launched.browser!, api.url);
    try {
      await opened.page.goto(stranger.url('organization-switcher', api.url, { token: me.token }));
      await expect.poll(() => opened.failed.length).toBeGreaterThan(0);
      expect(opened.failed[0]).toContain(`${api.url}/_widgets/UserManagement/organizations`);
      expect(await opened.page.getByText(/^Org /).count()).toBe(0);
      expect(opened.outside).toEqual([]);
    } finally {
      await opened.close();
      await stranger.close();
    }
  });
});
