import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import chromium from '@sparticuz/chromium';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, type Page, chromium as playwright } from 'playwright-core';

// Real-browser tests: headless Chromium (the binary shipped inside @sparticuz/chromium, so nothing
// is downloaded) driven by playwright-core, a page bundled at test time from the official widget
// components (tests/src/browser/page), and loopback servers only.

const PAGE_DIR = fileURLToPath(new URL('../browser/page/', import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export type Launched = { browser: Browser; reason?: undefined } | { browser?: undefined; reason: string };

/**
 * @sparticuz/chromium's flags (made for AWS Lambda), less those that would make the tests lie or
 * break: it turns web security (CORS, the same-origin policy) off, and the widgets' cross-origin
 * calls must meet the real thing; and a single-process browser dies when a context closes.
 */
const DROPPED = new Set(['--disable-web-security', '--allow-running-insecure-content', '--single-process']);

/** Debian's chromium (`apt-get install chromium`), the fallback when the packaged binary cannot start. */
const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const DEBIAN_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Headless Chromium, or why there is none: the caller skips its tests with that reason printed
 * (`describe.skipIf(!launched.browser)`), so a machine without a usable browser says so plainly.
 * Tries the binary inside @sparticuz/chromium, then Debian's.
 */
export async function launchChromium(): Promise<Launched> {
  const failures: string[] = [];
  try {
    const executablePath = await chromium.executablePath();
    const args = chromium.args.filter((arg) => !DROPPED.has(arg));
    return { browser: await playwright.launch({ executablePath, args, headless: true }) };
  } catch (error) {
    failures.push(`@sparticuz/chromium: ${(error as Error).message.split('\n')[0]}`);
  }
  if (existsSync(DEBIAN_CHROMIUM))
    try {
      return {
        browser: await playwright.launch({ executablePath: DEBIAN_CHROMIUM, args: DEBIAN_ARGS, headless: true }),
      };
    } catch (error) {
      failures.push(`${DEBIAN_CHROMIUM}: ${(error as Error).message.split('\n')[0]}`);
    }
  else failures.push(`${DEBIAN_CHROMIUM}: not installed`);
  const reason = `no headless Chromium could be launched (${failures.join('; ')})`;
  console.warn(`SKIPPED browser tests: ${reason}`);
  return { reason };
}

/** A loopback HTTP server on a free port. */
export async function listen(
  handler: RequestListener,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const bundles = new Map<string, Promise<{ js: string; css: string }>>();

/** A page's script and styles, bundled once per process with esbuild (no CDN, nothing fetched). */
function bundle(entry: string): Promise<{ js: string; css: string }> {
  let built = bundles.get(entry);
  if (!built) {
    built = build({
      entryPoints: [entry],
      tsconfig: `${PAGE_DIR}tsconfig.json`,
      bundle: true,
      write: false,
      outdir: 'out',
      format: 'esm',
      platform: 'browser',
      target: 'chrome120',
      jsx: 'automatic',
      minify: true,
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    }).then((result) => {
      const text = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
      return { js: text('.js'), css: text('.css') };
    });
    bundles.set(entry, built);
  }
  return built;
}

const HTML =
  '<!doctype html><html><head><meta charset="utf-8"><title>Atrium widgets</title>' +
  '<link rel="stylesheet" href="/main.css"></head><body><div id="root"></div>' +
  '<script type="module" src="/main.js"></script></body></html>';

export interface WidgetPage {
  /** This page server's origin: another port than the API's, so the widgets' calls are cross-origin. */
  origin: string;
  /** The page showing `widget` against the API at `api`, with `params` (e.g. `token`, `session`) in the query. */
  url(widget: string, api: string, params?: Record<string, string>): string;
  /** Every widget name the page asked a token for, in order. */
  tokenRequests: string[];
  close(): Promise<void>;
}

/**
 * Serves a page bundled from `entry` (default tests/src/browser/page/main.tsx; a function is
 * called at the first request, so the page may be written once the API's port is known);
 * `POST /widgets-token?widget=…` answers `tokenFor(widget)`, the page's token function (the
 * widgets call it on mount and again after a 403), as a host application's backend would.
 */
export async function serveWidgetPage(
  tokenFor: (widget: string) => Promise<string>,
  entry: string | (() => string) = `${PAGE_DIR}main.tsx`,
): Promise<WidgetPage> {
  if (typeof entry === 'string') await bundle(entry);
  const assets = () => bundle(typeof entry === 'string' ? entry : entry());
  const tokenRequests: string[] = [];
  const served = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page');
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const asset = (type: string, pick: (a: { js: string; css: string }) => string) =>
      void assets().then(
        (a) => send(200, type, pick(a)),
        (error: Error) => send(500, 'text/plain', error.message),
      );
    if (url.pathname === '/') return send(200, 'text/html; charset=utf-8', HTML);
    if (url.pathname === '/main.js') return asset('text/javascript; charset=utf-8', (a) => a.js);
    if (url.pathname === '/main.css') return asset('text/css; charset=utf-8', (a) => a.css);
    if (url.pathname === '/widgets-token' && req.method === 'POST') {
      const widget = url.searchParams.get('widget') ?? '';
      tokenRequests.push(widget);
      tokenFor(widget).then(
        (token) => send(200, 'text/plain', token),
        (error: Error) => send(500, 'text/plain', error.message),
      );
      return;
    }
    send(404, 'text/plain', 'not found');
  });
  return {
    origin: served.url,
    url: (widget, api, params = {}) => `${served.url}/?${new URLSearchParams({ widget, api, ...params })}`,
    tokenRequests,
    close: served.close,
  };
}

/** One call the page made to the API, as the browser saw it. */
export interface ApiCall {
  method: string;
  path: string;
  status: number;
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** Requests to anything but loopback: refused, and listed here (expected empty). */
  outside: string[];
  /** Uncaught errors of the page (expected empty). */
  pageErrors: string[];
  /** CSP violations the page reported, as `<directive> <blocked URI>`. */
  cspViolations: string[];
  /** Requests to loopback that failed at the network level (CORS refusals among them). */
  failed: string[];
  /** The page's calls to `apiOrigin` (preflights excluded), in the order they were answered. */
  apiCalls: ApiCall[];
  /**
   * Every request of the page to `apiOrigin`, preflights included, as `+<ms since opened> <status
   * or failure> <method> <url>`: what a failing test prints, so it says which call went wrong.
   */
  network: string[];
  close(): Promise<void>;
}

/**
 * A fresh context and page; every request leaving loopback is recorded and refused, page errors
 * and CSP violations are recorded. `timeoutMs` bounds each wait for an element (10 s by default,
 * shorter than a test's timeout, so a missing element fails with its locator named).
 */
export async function openPage(
  browser: Browser,
  apiOrigin: string,
  options: { viewport?: { width: number; height: number }; timeoutMs?: number } = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1100, height: 800 } });
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const target = new URL(route.request().url());
    if (target.protocol === 'data:' || target.protocol === 'blob:' || LOOPBACK.has(target.hostname))
      return route.continue();
    outside.push(target.href);
    return route.abort();
  });
  context.setDefaultTimeout(options.timeoutMs ?? 10_000);
  const page = await context.newPage();
  const cspViolations: string[] = [];
  await page.exposeFunction('reportCspViolation', (v: string) => cspViolations.push(v));
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => reportCspViolation(e.violatedDirective + ' ' + e.blockedURI));",
  );
  page.on('websocket', (ws) => {
    if (!LOOPBACK.has(new URL(ws.url()).hostname)) outside.push(ws.url());
  });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const opened = Date.now();
  const network: string[] = [];
  const logged = (outcome: string | number, method: string, url: string) =>
    network.push(`+${Date.now() - opened}ms ${outcome} ${method} ${url}`);
  const failed: string[] = [];
  page.on('requestfailed', (request) => {
    const url = new URL(request.url());
    const reason = request.failure()?.errorText ?? '?';
    if (url.origin === apiOrigin) logged(reason, request.method(), url.href);
    // Requests off loopback were refused above, and are listed in `outside`.
    if (LOOPBACK.has(url.hostname)) failed.push(`${request.method()} ${request.url()}: ${reason}`);
  });
  const apiCalls: ApiCall[] = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    const method = response.request().method();
    if (url.origin !== apiOrigin) return;
    logged(response.status(), method, url.href);
    if (method !== 'OPTIONS') apiCalls.push({ method, path: url.pathname + url.search, status: response.status() });
  });
  return {
    page,
    context,
    outside,
    pageErrors,
    cspViolations,
    failed,
    apiCalls,
    network,
    close: async () => {
      await page.close();
      await context.close();
    },
  };
}

/** Saves the page to tests/artifacts/screenshots/<name>.png (gitignored; CI keeps the folder). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true, animations: 'disabled', timeout: 20_000 });
}
