import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { getWorld } from '../helpers/world.ts';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const SCREENSHOTS = join(ROOT, 'tests', 'artifacts', 'screenshots');

/** Headless Chromium and the portal's built pages served by the app on loopback (its own issuer). */
export interface PortalInBrowser {
  /** Absent when no Chromium could start: `skipReason` says why. */
  browser: Browser | undefined;
  skipReason: string;
  url: string;
  deps: Deps;
  close(): Promise<void>;
}

/** Builds the portal's assets and serves them with the app; for a test file's `beforeAll`. */
export async function startPortalInBrowser(): Promise<PortalInBrowser> {
  const launched = await launchChromium();
  const world = await getWorld();
  const deps: Deps = { ...world.deps, tokens: { ...world.deps.tokens } };
  if (!launched.browser) {
    return { browser: undefined, skipReason: launched.reason, url: '', deps, close: async () => {} };
  }
  const assets = mkdtempSync(join(tmpdir(), 'atrium-portal-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'web', 'build.mjs'), assets, 'portal']);
  const server: Server = createServer(
    createApp(deps, { baseUrl: 'http://127.0.0.1', portalAssetsDir: join(assets, 'portal') }).handler,
  );
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  deps.tokens.issuer = url;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = launched.browser;
  return {
    browser,
    skipReason: '',
    url,
    deps,
    close: async () => {
      await browser.close();
      await new Promise((done) => server.close(done));
      rmSync(assets, { recursive: true, force: true });
    },
  };
}

/** A browser file's portal: started before its tests (`beforeAll`), closed after them. */
export function startPortalChromium(): Partial<PortalInBrowser> {
  const holder: Partial<PortalInBrowser> = {};
  beforeAll(async () => {
    Object.assign(holder, await startPortalInBrowser());
  }, 120_000);
  afterAll(async () => {
    await holder.close?.();
  });
  return holder;
}
