import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { clientSetup } from '../helpers/client.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';

const ALLOWED = 'http://app.example.test';
const WIDGET_REQUEST_HEADERS = 'authorization,content-type,workos-widgets-version,workos-widgets-type';

let env: TestEnvironment;
let own: Awaited<ReturnType<typeof startOwnApp>>;

beforeAll(async () => {
  env = await newEnvironment();
  own = await startOwnApp(env.deps, { corsOrigins: [ALLOWED, 'https://other.example.test'], accessLog: false });
});

afterAll(async () => {
  await own?.close();
});

function preflight(path: string, origin: string, method = 'GET') {
  return fetch(`${own.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': WIDGET_REQUEST_HEADERS,
    },
  });
}

function corsHeadersOf(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

describe('CORS on the client surfaces', () => {
  it.each([
    ['/_widgets/UserManagement/organizations', 'GET'],
    ['/_widgets/UserManagement/members/user_01', 'DELETE'],
    ['/client/graphql', 'POST'],
    ['/trpc/client.organizations', 'GET'],
    ['/trpc/client.organizations,client.organizations', 'GET'],
  ])(
    'a preflight of %s (%s) from an allowed origin is 204 with the echoed origin, before any auth',
    async (path, method) => {
      const res = await preflight(path, ALLOWED, method);
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect(res.headers.get('vary')).toMatch(/Origin/);
      expect(corsHeadersOf(res)).toEqual({
        'access-control-allow-origin': ALLOWED,
        'access-control-allow-methods': 'GET, POST, PUT, DELETE',
        'access-control-allow-headers':
          'Authorization, Content-Type, WorkOS-Widgets-Version, WorkOS-Widgets-Type, x-elevated-access-token',
        'access-control-max-age': '600',
      });
    },
  );

  it('a disallowed origin gets no CORS headers at all, on the preflight and on the request', async () => {
    const res = await preflight('/_widgets/UserManagement/organizations', 'http://evil.example.test');
    expect(res.status).toBe(204);
    expect(corsHeadersOf(res)).toEqual({});
    // A prefix or a different scheme of an allowed origin is not that origin.
    for (const origin of [`${ALLOWED}.evil.test`, 'https://app.example.test', 'null']) {
      expect(corsHeadersOf(await preflight('/client/graphql', origin, 'POST'))).toEqual({});
    }
    const setup = await clientSetup(env);
    const get = await fetch(`${own.url}/_widgets/UserManagement/organizations`, {
      headers: { Authorization: `Bearer ${setup.token}`, Origin: 'http://evil.example.test' },
    });
    expect(get.status).toBe(200);
    expect(corsHeadersOf(get)).toEqual({});
  });

  it('the answers of an allowed origin carry its origin, errors included, and never credentials', async () => {
    const setup = await clientSetup(env);
    const ok = await fetch(`${own.url}/_widgets/UserManagement/organizations`, {
      headers: { Authorization: `Bearer ${setup.token}`, Origin: ALLOWED, 'WorkOS-Widgets-Version': '1' },
    });
    expect(ok.status).toBe(200);
    expect(corsHeadersOf(ok)).toEqual({ 'access-control-allow-origin': ALLOWED });
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    const refused = await fetch(`${own.url}/client/graphql`, {
      method: 'POST',
      headers: { Origin: ALLOWED, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ clientApiStatus }' }),
    });
    expect(refused.status).toBe(403);
    expect(corsHeadersOf(refused)).toEqual({ 'access-control-allow-origin': ALLOWED });
  });

  it.each([
    '/organizations',
    '/user_management/users',
    '/trpc/organizations.list',
    '/trpc/client.organizations,organizations.list',
    '/widgets/token',
    '/client/token',
  ])('%s (not a client surface) gets no CORS headers, even from an allowed origin', async (path) => {
    const pre = await preflight(path, ALLOWED);
    expect(pre.status).not.toBe(204);
    expect(corsHeadersOf(pre)).toEqual({});
    const get = await fetch(`${own.url}${path}`, {
      headers: { Authorization: `Bearer ${env.apiKey}`, Origin: ALLOWED },
    });
    expect(corsHeadersOf(get)).toEqual({});
  });

  it('with no origins configured (the default), nothing gets CORS headers', async () => {
    const res = await fetch(`${env.world.url}/_widgets/UserManagement/organizations`, {
      method: 'OPTIONS',
      headers: { Origin: ALLOWED, 'Access-Control-Request-Method': 'GET' },
    });
    expect(res.status).toBe(204);
    expect(corsHeadersOf(res)).toEqual({});
  });
});

describe('CORS in a real browser', () => {
  let browser: Browser | undefined;
  let skipReason = '';
  let context: BrowserContext;
  let page: Server;
  let pageOrigin: string;

  beforeAll(async () => {
    // Web security (and so CORS) on: launchChromium drops @sparticuz/chromium's --disable-web-security.
    const launched = await launchChromium();
    if (!launched.browser) {
      skipReason = launched.reason;
      return;
    }
    browser = launched.browser;
    context = await browser.newContext();
    // The host page: another loopback port, so another origin.
    page = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>host</title>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
  });

  /** Runs the widgets' kind of fetch (bearer, widget headers, JSON) in the page against `apiUrl`. */
  async function fetchFromPage(apiUrl: string, token: string) {
    // One context for the whole file, one tab per fetch.
    const tab = await context.newPage();
    try {
      await tab.goto(`${pageOrigin}/`);
      return await tab.evaluate(
        async ({ apiUrl, token }) => {
          const headers = {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/json',
            'WorkOS-Widgets-Version': '1',
            'WorkOS-Widgets-Type': 'organization-switcher',
          };
          const out: Record<string, unknown> = {};
          try {
            const rest = await fetch(`${apiUrl}/_widgets/UserManagement/organizations`, { headers, cache: 'no-store' });
            out.rest = { status: rest.status, body: await rest.json() };
            const gql = await fetch(`${apiUrl}/client/graphql`, {
              method: 'POST',
              headers: { ...headers, Accept: 'application/graphql-response+json, application/json' },
              body: JSON.stringify({ query: '{ clientApiStatus }' }),
            });
            out.graphql = { status: gql.status, body: await gql.json() };
          } catch (error) {
            out.error = String(error);
          }
          return out;
        },
        { apiUrl, token },
      );
    } finally {
      await tab.close();
    }
  }

  it('a page on an allowed origin reads the widgets REST and GraphQL answers; another origin cannot', async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const setup = await clientSetup(env);
    const allowed = await startOwnApp(env.deps, { corsOrigins: [pageOrigin], accessLog: false });
    try {
      const result = await fetchFromPage(allowed.url, setup.token);
      expect(result.error).toBeUndefined();
      expect(result.rest).toMatchObject({ status: 200, body: { data: [{ id: setup.organizationId }] } });
      expect(result.graphql).toEqual({ status: 200, body: { data: { clientApiStatus: 'ok' } } });
    } finally {
      await allowed.close();
    }
    // `own` allows other origins only: the browser refuses to hand the answer to the page.
    const refused = await fetchFromPage(own.url, setup.token);
    expect(refused.rest).toBeUndefined();
    expect(refused.error).toMatch(/Failed to fetch/);
  });
});
