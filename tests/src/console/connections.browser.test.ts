import { readFileSync } from 'node:fs';
import { connections, redirectUris } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER } from '../helpers/world.ts';
import { openConsoleSection, SCREENSHOTS, startConsoleChromium } from './helpers.ts';

// The console's Connections page (issue #37) in headless Chromium: create a SAML connection, see
// what to paste into the IdP, configure it from the IdP metadata with its options, and manage the
// environment's redirect URIs. Screenshot in tests/artifacts/screenshots/console-connection.png.

const METADATA = readFileSync(new URL('../connections/fixtures/idp-metadata.xml', import.meta.url), 'utf8');

const chromium = startConsoleChromium();

describe('the console: connections', () => {
  it('creates a SAML connection, shows its SP facts, configures it from IdP metadata, and manages redirect URIs', {
    timeout: 120_000,
  }, async (ctx) => {
    const { browser, unavailable } = chromium;
    if (!browser) {
      console.log(`console connections browser test skipped: ${unavailable}`);
      ctx.skip();
      return;
    }
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env, 'Console SSO');
    const stored = async () =>
      (await env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId)))[0];
    const opened = await openConsoleSection(browser, env, 'Connections', { height: 1200, exactHeading: true });
    const { page } = opened;

    // Create: the connection is chosen, with what the IdP needs.
    await page.getByLabel('Organization id').fill(organizationId);
    await page.getByLabel('Name', { exact: true }).fill('Console SAML');
    await page.getByLabel('Type').selectOption('GenericSAML');
    await page.getByRole('button', { name: 'Create connection' }).click();
    const detail = page.getByTestId('connection-detail');
    await detail.waitFor();
    const id = (await stored())?.id as string;
    expect(await detail.getByTestId('saml-acs-url').innerText()).toBe(`${TEST_ISSUER}/sso/saml/acs/${id}`);
    expect(await detail.getByTestId('saml-sp-entity-id').innerText()).toBe(`${TEST_ISSUER}/sso/saml/${id}`);
    await detail.getByText('No IdP certificate yet.').waitFor();

    // Configure from the metadata, with signed requests.
    await detail.getByLabel('IdP metadata XML').fill(METADATA);
    await detail.getByLabel('Sign requests').check();
    await detail.getByRole('button', { name: 'Save SAML configuration' }).click();
    await expect
      .poll(async () => detail.getByTestId('idp-entity-id').innerText(), { timeout: 20_000 })
      .toBe('https://idp.example.test/metadata');
    await detail.getByText('signed requests: yes').waitFor();
    expect(await stored()).toMatchObject({
      samlIdpSsoUrl: 'https://idp.example.test/sso',
      samlSignRequests: true,
      samlIdpInitiatedEnabled: false,
    });
    expect((await stored())?.samlIdpCertificates).toHaveLength(1);

    // Bad metadata: the reason, nothing changed.
    await detail
      .getByLabel('IdP metadata XML')
      .fill('<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>');
    await detail.getByRole('button', { name: 'Save SAML configuration' }).click();
    await page.getByText(/no EntityDescriptor with an IDPSSODescriptor/).waitFor();
    expect((await stored())?.samlIdpEntityId).toBe('https://idp.example.test/metadata');

    // Redirect URIs: add two, make the second the default, remove the first.
    const uris = () => env.deps.db.select().from(redirectUris).where(eq(redirectUris.environmentId, env.environmentId));
    await page.getByLabel('Redirect URI', { exact: true }).fill('https://app.console.test/callback');
    await page.getByLabel('Default', { exact: true }).check();
    await page.getByRole('button', { name: 'Add redirect URI' }).click();
    await page.getByRole('cell', { name: 'https://app.console.test/callback' }).waitFor();
    await page.getByLabel('Redirect URI', { exact: true }).fill('http://localhost:3000/callback');
    await page.getByRole('button', { name: 'Add redirect URI' }).click();
    await page.getByRole('cell', { name: 'http://localhost:3000/callback' }).waitFor();
    await page.getByRole('button', { name: 'Make default' }).click();
    await expect
      .poll(async () => (await uris()).filter((u) => u.isDefault).map((u) => u.uri))
      .toEqual(['http://localhost:3000/callback']);
    await page
      .getByRole('row', { name: /app\.console\.test/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    await expect.poll(async () => (await uris()).map((u) => u.uri)).toEqual(['http://localhost:3000/callback']);
    await page.screenshot({ path: `${SCREENSHOTS}console-connection.png`, fullPage: true });

    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(opened.cspViolations).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  });
});
