import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from '../helpers/browser.ts';
import { adminCaller, adminTokenOf } from '../helpers/tokens.ts';
import { getWorld, uniqueDomain } from '../helpers/world.ts';
import { consoleBuilt } from './helpers.ts';

// The operator console in a real headless Chromium (helpers/browser.ts: @sparticuz/chromium's, else
// Debian's), against the worker's server on loopback: the walk-through, with a
// screenshot of each page in tests/artifacts/screenshots/console-*.png.

const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

let browser: Browser | undefined;
let unavailable: string | undefined;

beforeAll(async () => {
  await consoleBuilt();
  mkdirSync(SCREENSHOTS, { recursive: true });
  ({ browser, reason: unavailable } = await launchChromium());
});

afterAll(async () => {
  await browser?.close();
});

const shoot = (page: Page, name: string) =>
  page.screenshot({ path: `${SCREENSHOTS}console-${name}.png`, fullPage: true });

/** Clicks a nav tab of the console. */
const open = (page: Page, tab: string) => page.getByRole('navigation').getByRole('button', { name: tab }).click();

describe('the operator console in a browser', () => {
  // A long walk-through on a shared machine (two RSA-2048 keys among it): more than the default 30 s.
  it('signs in, creates an environment and an API key, an organization and a verified domain, shows the event, rotates the signing key', {
    timeout: 120_000,
  }, async (ctx) => {
    if (!browser) {
      console.log(`console browser test skipped: ${unavailable}`);
      ctx.skip();
      return;
    }
    const { url } = await getWorld();
    const opened = await openPage(browser, url, { viewport: { width: 1280, height: 900 }, timeoutMs: 30_000 });
    const { page } = opened;

    // Sign in with the admin token.
    const response = await page.goto(`${url}/console`);
    expect(response?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    const token = await adminTokenOf();
    await page.getByLabel('Admin token').fill(token);
    await shoot(page, 'signin');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Environments' }).waitFor();

    // Create an environment: its first API key is shown once.
    const envName = `browser-${Date.now()}`;
    await page.getByLabel('Environment name').fill(envName);
    await page.getByRole('button', { name: 'Create environment' }).click();
    await expect.poll(() => page.getByTestId('shown-once').innerText()).toMatch(/sk_test_[0-9A-Za-z]{40}/);
    await page.getByRole('button', { name: 'Done' }).click();
    // A refused write shows the contract's message; the form keeps what was typed.
    await page.getByLabel('Environment name').fill(envName);
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('alert').getByText('An environment with this name already exists').waitFor();
    expect(await page.getByLabel('Environment name').inputValue()).toBe(envName);
    await page.getByLabel('Environment', { exact: true }).selectOption({ label: envName });
    const env = (await (await adminCaller()).environments.list()).find((e) => e.name === envName);
    expect(env).toBeDefined();
    const environment = env?.id as string;

    // A second API key, shown once, then listed by its prefix only.
    await page.getByRole('button', { name: 'Create API key' }).click();
    const shown = (await page.getByTestId('shown-once').innerText()).match(/sk_test_[0-9A-Za-z]{40}/)?.[0] as string;
    expect(shown).toBeDefined();
    await page.getByRole('cell', { name: `${shown.slice(0, 16)}…` }).waitFor();
    await shoot(page, 'environments');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.locator('body').innerText()).not.toContain(shown);
    // Revoke it by id: the row says so, and the key no longer authenticates.
    const keyRow = page.getByRole('row').filter({ hasText: `${shown.slice(0, 16)}…` });
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    await keyRow.getByText(/^revoked/).waitFor();
    const refused = await fetch(`${url}/organizations`, { headers: { Authorization: `Bearer ${shown}` } });
    expect(refused.status).toBe(401);

    // An organization with a domain, verified by hand with a reason.
    await open(page, 'Organizations');
    await page.getByLabel('Organization name').fill('Browser Acme');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Domains of Browser Acme' }).waitFor();
    const domain = uniqueDomain('browser');
    await page.getByLabel('Domain', { exact: true }).fill(domain);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: `Domain ${domain}` }).waitFor();
    // Not checked (no verification started): what the DNS worker saw so far.
    await page.getByText('DNS checks 0 · name servers not found yet', { exact: true }).waitFor();
    await page.getByLabel('Reason (required, recorded on the event)').fill('Registrar confirmed by phone');
    await page.getByRole('button', { name: 'Verify manually' }).click();
    await page.getByRole('cell', { name: 'organization_domain.verified' }).waitFor();
    await page.getByRole('cell', { name: 'Registrar confirmed by phone' }).waitFor();
    await shoot(page, 'organizations');

    // The event stream shows the verification, by the actor admin, with the reason.
    await open(page, 'Events');
    const row = page.getByRole('row').filter({ hasText: 'organization_domain.verified' });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/admin\s+Registrar confirmed by phone/);
    await shoot(page, 'events');

    // Rotate the signing key: the new kid is listed and published in the JWKS.
    await open(page, 'Signing keys');
    await page.getByRole('heading', { name: 'Signing keys' }).waitFor();
    // The first JWKS read makes the environment's first key (RSA-2048: up to seconds here).
    await page.getByTestId('jwks-kids').locator('li').first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Rotate signing key' }).click();
    const keyCount = async () => (await (await adminCaller()).signingKeys.list({ environment })).length;
    await expect.poll(keyCount, { timeout: 20_000 }).toBe(2);
    const [newest] = await (await adminCaller()).signingKeys.list({ environment });
    const kid = newest?.kid as string;
    await page.getByTestId('jwks-kids').getByText(kid).waitFor();
    await page.getByRole('cell', { name: kid }).waitFor();
    const jwks = (await (await fetch(`${url}/sso/jwks/${env?.client_id}`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(kid);
    await shoot(page, 'signing-keys');

    // The other pages render.
    for (const [tab, heading, name] of [
      ['Users & memberships', 'Users', 'users'],
      ['Invitations', 'Invitations', 'invitations'],
      ['Connections', 'Connections', 'connections'],
      ['Webhooks', 'Webhook endpoints', 'webhooks'],
    ] as const) {
      await open(page, tab);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await shoot(page, name);
    }

    // The token is nowhere in the page's reach: not stored, and the session cookie is HttpOnly.
    const stored = await page.evaluate(() => [
      document.cookie,
      JSON.stringify(localStorage),
      JSON.stringify(sessionStorage),
    ]);
    expect(stored.join(' ')).not.toContain(token);
    expect(stored[0]).not.toContain('atrium_console');

    // Sign out: the page asks for the token again, and the old cookie no longer works.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    await page.reload();
    await page.getByLabel('Admin token').waitFor();

    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.cspViolations).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
