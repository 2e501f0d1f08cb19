import { directories, directoryGroups } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { pushGroup, pushUser } from '../directories/directory-data.ts';
import { makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';
import { openConsoleSection, SCREENSHOTS, startConsoleChromium } from './helpers.ts';

// The console's Directories page (issue #36) in headless Chromium: create a directory for an
// organization (base URL and token shown once), rotate its token, map a pushed group to a role,
// delete it. Screenshot in tests/artifacts/screenshots/console-directories.png.

const chromium = startConsoleChromium();

describe('the console: directories', () => {
  it('creates a directory showing its token once, rotates it, maps a group to a role, deletes it', {
    timeout: 120_000,
  }, async (ctx) => {
    const { browser, unavailable } = chromium;
    if (!browser) {
      console.log(`console directories browser test skipped: ${unavailable}`);
      ctx.skip();
      return;
    }
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env, 'Console Acme');
    const stored = () => env.deps.db.select().from(directories).where(eq(directories.environmentId, env.environmentId));
    const opened = await openConsoleSection(browser, env, 'Directories');
    const { page } = opened;
    await page.getByText('No directories yet.').waitFor();

    // Create one for the organization: the base URL and the token are shown once.
    await page.getByLabel('Organization', { exact: true }).selectOption({ label: 'Console Acme' });
    await page.getByLabel('Directory name').fill('Acme Okta');
    await page.getByLabel('Directory type').selectOption('azure scim v2.0');
    await page.getByRole('button', { name: 'Create directory' }).click();
    const token = page.getByTestId('bearer-token');
    await token.waitFor();
    const first = await token.innerText();
    expect(first).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    const [row] = await stored();
    expect(row).toMatchObject({ organizationId, name: 'Acme Okta', type: 'azure scim v2.0', state: 'unlinked' });
    expect(await page.getByTestId('scim-base-url').innerText()).toBe(`http://127.0.0.1/scim/v2/${row?.id}`);
    await page.getByRole('cell', { name: row?.id as string }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.locator('body').innerText()).not.toContain(first);

    // Rotate: a new token, shown once; the stored hash changed.
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await expect.poll(() => token.innerText().catch(() => '')).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    const second = await token.innerText();
    expect(second).not.toBe(first);
    await expect.poll(async () => (await stored())[0]?.tokenHash).not.toBe(row?.tokenHash);
    await page.getByRole('button', { name: 'Done' }).click();

    // The identity provider pushed a user and a group; map the group to the role admin.
    const ada = await pushUser(env, row?.id as string, { userName: 'ada@example.com' });
    const admins = await pushGroup(env, row?.id as string, 'Admins', [ada.id]);
    await page.getByRole('button', { name: 'Acme Okta' }).click();
    await page.getByRole('heading', { name: 'Groups of Acme Okta' }).waitFor();
    await page.getByRole('cell', { name: 'Admins', exact: true }).waitFor();
    await page.getByLabel('Role of Admins').fill('admin');
    await page.getByRole('button', { name: 'Map', exact: true }).click();
    await page.getByRole('cell', { name: 'admin', exact: true }).waitFor();
    const roleOf = async () =>
      (await env.deps.db.select().from(directoryGroups).where(eq(directoryGroups.id, admins.id)))[0]?.roleId;
    expect(await roleOf()).toMatch(/^role_/);
    // An unknown role: the contract's message, and the mapping stays.
    await page.getByLabel('Role of Admins').fill('superuser');
    await page.getByRole('button', { name: 'Map', exact: true }).click();
    await page.getByRole('alert').getByText("Role 'superuser' does not exist for this organization.").waitFor();
    expect(await roleOf()).toMatch(/^role_/);
    await page.screenshot({ path: `${SCREENSHOTS}console-directories.png`, fullPage: true });

    // Delete it.
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No directories yet.').waitFor();
    expect(await stored()).toEqual([]);

    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.cspViolations).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
