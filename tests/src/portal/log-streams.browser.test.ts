import { join } from 'node:path';
import { auditLogStreams } from '@atrium/db';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.ts';
import { newEnvironment } from '../helpers/world.ts';
import { SCREENSHOTS, startPortalChromium } from './portal-browser.ts';

// The portal's log_streams page in headless Chromium (issue #38): the official
// AdminPortalAuditLogStreaming widget with the portal token, and the page's own setup flow: the IT
// admin chooses Splunk, fills its fields, saves; the row exists, its token sealed; the page and
// the widget show the stream; pause shows it paused.

const portal = startPortalChromium();

describe('the log_streams portal page in a browser', () => {
  it('sets up a Splunk stream alone: fields, save, the row, the page and the widget show it, pause', async (ctx) => {
    const { browser, skipReason = '', url = '' } = portal;
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'Stream Corp' });
    const { link } = await workos.adminPortal.generateLink({
      organization: organization.id,
      intent: 'log_streams' as 'sso',
    });
    const opened = await openPage(browser, url, { viewport: { width: 1100, height: 900 }, timeoutMs: 30_000 });
    const { page } = opened;
    await page.goto(link);
    expect(page.url()).toBe(`${url}/portal/log_streams`);
    const root = page.locator('#portal-root');
    // The official widget, with the portal token: no stream yet.
    await root.getByText("You haven't set up Log Streams yet.").waitFor({ timeout: 20_000 });

    await page.getByLabel('Splunk (HTTP Event Collector)').check();
    await page.getByLabel('HEC URL').fill('https://splunk.example.com:8088');
    await page.getByLabel('Index (optional)').fill('audit');
    await page.getByLabel('HEC token').fill('splunk-browser-secret');
    expect(await page.getByTestId('portal-log-stream-form').innerText()).toContain('HTTP Event Collector');
    await page.getByRole('button', { name: 'Start streaming' }).click();
    const panel = page.getByTestId('portal-log-stream');
    await panel.waitFor({ timeout: 15_000 });
    const [row] = await env.deps.db
      .select()
      .from(auditLogStreams)
      .where(eq(auditLogStreams.environmentId, env.environmentId));
    expect(row).toMatchObject({
      organizationId: organization.id,
      type: 'Splunk',
      state: 'active',
      config: { url: 'https://splunk.example.com:8088', index: 'audit' },
    });
    expect(row?.credentials).toMatch(/^v1\./);
    expect(await panel.getAttribute('data-stream')).toBe(row?.id);
    expect(await page.getByTestId('portal-log-stream-state').innerText()).toBe('Active');
    expect(await panel.innerText()).toContain('Streaming to Splunk (HTTP Event Collector)');
    // The widget, remounted, shows the stream.
    await root.getByText('Streaming', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.content()).not.toContain('splunk-browser-secret');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-log-streams-active.png'), fullPage: true });

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('[data-testid="portal-log-stream"][data-state="inactive"]').waitFor({ timeout: 15_000 });
    expect(
      (
        await env.deps.db
          .select()
          .from(auditLogStreams)
          .where(eq(auditLogStreams.id, row?.id ?? ''))
      )[0]?.state,
    ).toBe('inactive');
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 120_000);
});
