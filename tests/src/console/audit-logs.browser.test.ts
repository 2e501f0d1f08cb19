import { auditLogEvents } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';
import { openConsoleSection, SCREENSHOTS, startConsoleChromium } from './helpers.ts';

// The console's Audit logs page (issue #38) in headless Chromium: an organization's events,
// newest first, 20 a page (Older / Newer), filtered by action; nothing on it changes an event.
// Screenshot in tests/artifacts/screenshots/console-audit-logs.png.

const chromium = startConsoleChromium();

describe('the console: audit logs', () => {
  it("shows an organization's events newest first, pages them and filters by action", {
    timeout: 120_000,
  }, async (ctx) => {
    const { browser, unavailable } = chromium;
    if (!browser) {
      console.log(`console audit logs browser test skipped: ${unavailable}`);
      ctx.skip();
      return;
    }
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env, 'Audited Acme');
    // 22 events through the API (the first is user.invited, the others user.signed_in by user_1 ... user_21).
    for (let i = 0; i < 22; i++) {
      const res = await env.http.post('/audit_logs/events', {
        organization_id: organizationId,
        event: {
          action: i === 0 ? 'user.invited' : 'user.signed_in',
          occurred_at: new Date(Date.now() - (22 - i) * 1_000).toISOString(),
          actor: { id: `user_${i}`, type: 'user', name: `Person ${i}` },
          targets: [{ id: 'team_1', type: 'team' }],
          context: { location: '203.0.113.9' },
        },
      });
      expect(res.status).toBe(200);
    }
    const stored = () =>
      env.deps.db.select().from(auditLogEvents).where(eq(auditLogEvents.environmentId, env.environmentId));
    const before = await stored();

    const opened = await openConsoleSection(browser, env, 'Audit logs');
    const { page } = opened;
    await page.getByLabel('Organization', { exact: true }).selectOption({ label: 'Audited Acme' });

    // Newest first: Person 21 heads the first page of 20; Person 0 and 1 are on the next.
    const actors = () => page.locator('tbody tr td:nth-child(3)').allInnerTexts();
    await page.getByRole('cell', { name: 'Person 21 (user)' }).waitFor();
    const first = await actors();
    expect(first).toHaveLength(20);
    expect(first[0]).toBe('Person 21 (user)');
    expect(first[19]).toBe('Person 2 (user)');
    expect(await page.getByRole('button', { name: 'Newer' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByRole('cell', { name: 'Person 0 (user)' }).waitFor();
    expect(await actors()).toEqual(['Person 1 (user)', 'Person 0 (user)']);
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByRole('cell', { name: 'Person 21 (user)' }).waitFor();

    // Filter by action: only the invitation.
    await page.getByLabel('Action').fill('user.invited');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(actors).toEqual(['Person 0 (user)']);
    await page.getByRole('cell', { name: 'user.invited' }).waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}console-audit-logs.png`, fullPage: true });

    // The page only reads.
    expect(await stored()).toEqual(before);
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.cspViolations).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
