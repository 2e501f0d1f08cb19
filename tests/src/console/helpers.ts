import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildWeb } from '@atrium/web/build';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium, type OpenedPage, openPage } from '../helpers/browser.ts';
import { adminTokenOf } from '../helpers/tokens.ts';
import { getWorld, type TestEnvironment } from '../helpers/world.ts';

let built: Promise<string> | undefined;

/** web/dist/console, built once per worker (the server serves it from there). */
export function consoleBuilt(): Promise<string> {
  built ??= buildWeb(undefined, ['console']);
  return built;
}

export interface ConsoleSession {
  /** The `Cookie` header the browser would send. */
  cookie: string;
  csrf: string;
  setCookies: string[];
  body: { csrf_token: string; expires_at: string };
}

/** Signs in to the console with an admin token, as the sign-in form does. */
export async function signIn(token: string): Promise<ConsoleSession> {
  const { url } = await getWorld();
  const res = await fetch(`${url}/console/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  const setCookies = res.headers.getSetCookie();
  const value = setCookies[0]?.split(';')[0] ?? '';
  const body = (await res.json()) as ConsoleSession['body'];
  return { cookie: value, csrf: body.csrf_token, setCookies, body };
}

/** A tRPC call over HTTP as the console makes it (`GET` for a query, `POST` for a mutation). */
export async function consoleCall(
  path: string,
  input: unknown,
  headers: Record<string, string>,
  kind: 'query' | 'mutation' = 'query',
) {
  const { url } = await getWorld();
  const res =
    kind === 'query'
      ? await fetch(`${url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers })
      : await fetch(`${url}/trpc/${path}`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify(input),
        });
  return { status: res.status, body: (await res.json()) as any };
}

/**
 * The console's Chromium prologue: a page on the worker's server, signed in with the admin token
 * through the form, the environment chosen, and the navigation's `section` open (its heading shown).
 */
export async function openConsoleSection(
  browser: Browser,
  env: TestEnvironment,
  section: string,
  options: { height?: number; exactHeading?: boolean } = {},
): Promise<OpenedPage & { url: string }> {
  const { url } = await getWorld();
  const opened = await openPage(browser, url, {
    viewport: { width: 1280, height: options.height ?? 900 },
    timeoutMs: 30_000,
  });
  const { page } = opened;
  await page.goto(`${url}/console`);
  await page.getByLabel('Admin token').fill(await adminTokenOf());
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Environments' }).waitFor();
  await page.getByLabel('Environment', { exact: true }).selectOption({ value: env.environmentId });
  await page.getByRole('navigation').getByRole('button', { name: section }).click();
  await page.getByRole('heading', { name: section, exact: options.exactHeading ?? false }).waitFor();
  return Object.assign(opened, { url });
}

/** Where the console's browser tests leave their screenshots. */
export const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

/** The Chromium of a console browser file: launched once before its tests, closed after. */
export interface ConsoleBrowser {
  browser?: Browser | undefined;
  /** Why Chromium could not start (the tests then skip). */
  unavailable?: string | undefined;
}

/**
 * The console browser files' start-up: the built console, the admin token and Chromium before
 * the file's tests (`beforeAll`), Chromium closed after them.
 */
export function startConsoleChromium(): ConsoleBrowser {
  const state: ConsoleBrowser = {};
  beforeAll(async () => {
    await consoleBuilt();
    await adminTokenOf();
    mkdirSync(SCREENSHOTS, { recursive: true });
    const launched = await launchChromium();
    state.browser = launched.browser;
    state.unavailable = launched.reason;
  });
  afterAll(async () => {
    await state.browser?.close();
  });
  return state;
}
