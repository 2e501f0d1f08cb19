import { join } from 'node:path';
import { buildNextAuditLogExport } from '@atrium/routers';
import { WorkOS } from '@workos-inc/node';
import { parse } from 'csv-parse/sync';
import { describe, expect, it, vi } from 'vitest';
import { openPage } from '../helpers/browser.ts';
import { newEnvironment } from '../helpers/world.ts';
import { SCREENSHOTS, startPortalChromium } from './portal-browser.ts';

// The portal's audit_logs page in headless Chromium (issue #38): the IT admin opens the link, sees
// the organization's events, narrows them by action, exports them, and once the worker has built
// the export the page shows its download link, whose CSV holds only the filtered events.

const MINUTE = 60_000;

const portal = startPortalChromium();

describe('the audit_logs portal page in a browser', () => {
  it('shows the events, narrows them by action, exports them and links the CSV', async (ctx) => {
    const { browser, skipReason = '', url = '' } = portal;
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'Audit Corp' });
    const events = [
      { action: 'user.signed_in', actor: 'user_ann', name: 'Ann Lee', at: 30 },
      { action: 'document.deleted', actor: 'user_bo', name: 'Bo Chen', at: 20 },
      { action: 'user.signed_in', actor: 'user_jon', name: 'Jon Smith', at: 10 },
    ];
    for (const e of events) {
      await workos.auditLogs.createEvent(organization.id, {
        action: e.action,
        occurredAt: new Date(Date.now() - e.at * MINUTE),
        actor: { id: e.actor, type: 'user', name: e.name },
        targets: [{ id: 'doc_1', type: 'document', name: 'Q3 plan' }],
        context: { location: '198.51.100.4', userAgent: 'Chrome/120' },
      });
    }
    const { link } = await workos.adminPortal.generateLink({
      organization: organization.id,
      intent: 'audit_logs' as 'sso',
    });
    const opened = await openPage(browser, url, { viewport: { width: 1200, height: 900 }, timeoutMs: 30_000 });
    const { page } = opened;
    await page.goto(link);
    expect(page.url()).toBe(`${url}/portal/audit_logs`);
    const table = page.getByTestId('portal-audit-log-events');
    await table.waitFor({ timeout: 20_000 });
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(3);
    // Newest first: time, action, actor, targets, location.
    const first = await rows.nth(0).innerText();
    expect(first).toContain('user.signed_in');
    expect(first).toContain('Jon Smith (user_jon)');
    expect(first).toContain('document: Q3 plan (doc_1)');
    expect(first).toContain('198.51.100.4');
    expect(await rows.nth(2).innerText()).toContain('Ann Lee (user_ann)');

    await page.getByLabel('Action').fill('user.signed_in');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await vi.waitFor(async () => expect(await rows.count()).toBe(2), { timeout: 15_000 });
    expect(await table.innerText()).not.toContain('document.deleted');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-audit-logs-filtered.png'), fullPage: true });

    await page.getByRole('button', { name: 'Export CSV' }).click();
    const exported = page.getByTestId('portal-audit-log-export');
    await page.locator('[data-testid="portal-audit-log-export"][data-state="pending"]').waitFor({ timeout: 15_000 });
    expect(await exported.innerText()).toContain('Preparing your export');
    // The export worker, run directly as `npm start` runs it; the page polls until the link shows.
    const download = page.getByTestId('portal-audit-log-download');
    await vi.waitFor(
      async () => {
        // Drained: other files' fixtures leave exports pending in this worker's database too.
        while (await buildNextAuditLogExport(env.deps)) {
          // one export built per call
        }
        expect(await download.count()).toBe(1);
      },
      { timeout: 30_000, interval: 500 },
    );
    const href = (await download.getAttribute('href')) ?? '';
    expect(href.startsWith(`${url}/audit_logs/exports/`)).toBe(true);
    const csv: string[][] = parse(await (await fetch(href)).text());
    expect(csv.slice(1).map((r) => [r[1], r[3]])).toEqual([
      ['user.signed_in', 'user_ann'],
      ['user.signed_in', 'user_jon'],
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-audit-logs-export.png'), fullPage: true });
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 120_000);
});
