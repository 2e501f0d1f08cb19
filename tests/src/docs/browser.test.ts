import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from '../helpers/browser.ts';
import { getWorld } from '../helpers/world.ts';

// The API reference in a real headless Chromium (helpers/browser.ts), against the worker's server
// on loopback. Every request to another host is recorded and refused (openPage): /docs must
// render from this process alone.

// Skipped, with the reason printed, where no headless Chromium can be launched.
const launched = await launchChromium();

afterAll(async () => {
  await launched.browser?.close();
});

describe('/docs', () => {
  it.skipIf(!launched.browser)(
    'shows the operations with no request leaving the machine and no CSP violation',
    async () => {
      const { url } = await getWorld();
      const opened = await openPage(launched.browser!, url, { timeoutMs: 30_000 });
      const { page } = opened;

      const response = await page.goto(`${url}/docs`);
      expect(response?.status()).toBe(200);
      const csp = response?.headers()['content-security-policy'] ?? '';
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);

      // Scalar renders the OpenAPI document's summaries and paths.
      await page.getByText('Create an organization').first().waitFor({ timeout: 15_000 });
      const text = await page.locator('body').innerText();
      for (const summary of ['Create an organization', 'List organizations', 'Get an organization by external id'])
        expect(text).toContain(summary);
      expect(text).toContain('/organizations/{id}');
      // Nothing that would send the document to a third party: no "Ask AI" agent, no "Generate
      // MCP", no developer toolbar (its "Share" uploads the document), even on a loopback URL.
      for (const label of [/Ask AI/i, /Generate MCP/, 'Developer Tools']) {
        await expect(page.getByText(label).count(), String(label)).resolves.toBe(0);
      }

      await opened.close();
      expect(opened.outside).toEqual([]);
      // The one refusal expected: zod (inside the bundle) probes `Function('')` once to see whether
      // it may compile validators, and falls back to interpreting them. Nothing else is blocked.
      expect(opened.cspViolations.filter((v) => v !== 'script-src eval')).toEqual([]);
      expect(opened.pageErrors).toEqual([]);
      const served = opened.apiCalls.map((call) => call.path.split('?')[0] ?? '');
      expect(served).toContain('/openapi.json');
      expect(served.some((p) => /^\/docs\/assets\/[^/]+\/standalone\.js$/.test(p))).toBe(true);
    },
    90_000,
  );

  it('configures Scalar with its AI agent, MCP generator, developer tools and telemetry off', async () => {
    const { url } = await getWorld();
    const html = await (await fetch(`${url}/docs`)).text();
    const src = html.match(/src="(\/docs\/assets\/[^"]+\/init\.js)"/)?.[1];
    const init = await (await fetch(`${url}${src}`)).text();
    const config = JSON.parse(init.match(/createApiReference\('#app', (.*)\);/)?.[1] ?? '{}');
    expect(config).toMatchObject({
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      telemetry: false,
      withDefaultFonts: false,
    });
  });

  it('serves the bundle from the installed package with a year-long cache', async () => {
    const { url } = await getWorld();
    const html = await (await fetch(`${url}/docs`)).text();
    const src = html.match(/src="(\/docs\/assets\/[^"]+\/standalone\.js)"/)?.[1];
    expect(src).toMatch(/^\/docs\/assets\/.+\/standalone\.js$/);
    const bundle = await fetch(`${url}${src}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(`${url}/docs/assets/0.0.0/standalone.js`)).status).toBe(404);
  });
});
