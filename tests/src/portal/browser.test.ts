import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { connections, directories, portalSessions } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';
import { type DevDnsServer, startDevDns, startDevIdp, VerificationWorker } from '@atrium/server';
import { DomainDataState, WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from '../helpers/browser.ts';
import { pushToDirectory } from '../helpers/directories.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { getWorld, newEnvironment, uniqueDomain } from '../helpers/world.ts';

// The admin portal end to end in headless Chromium (from @sparticuz/chromium, nothing downloaded):
// the SDK makes a domain_verification link, the page opens with the official widget bundled at
// build time (web/build.mjs), the TXT record it shows is published on a loopback DNS
// server (dns2), the DNS worker's check runs (one direct tick, no sleeps), and the browser lands
// on success_url. A reused link shows the readable page.

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const SCREENSHOTS = join(ROOT, 'tests', 'artifacts', 'screenshots');

/**
 * CSP refusals other than zod's one `Function('')` probe (as on /docs). The widgets' provider
 * icons would be WorkOS's CDN's; portal.css draws them from the page, so none is asked for.
 */
const unexpected = (violations: string[]) => violations.filter((v) => v !== 'script-src eval');

let browser: Browser | undefined;
let skipReason = '';
let assets: string;
let server: Server;
let app: Server;
let url: string;
let appUrl: string;
let deps: Deps;
let dns: DevDnsServer;

async function listen(s: Server): Promise<string> {
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const launched = await launchChromium();
  if (!launched.browser) {
    skipReason = launched.reason;
    return;
  }
  browser = launched.browser;
  assets = mkdtempSync(join(tmpdir(), 'atrium-portal-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'web', 'build.mjs'), assets, 'portal']);
  // The server as `npm start` runs it: the portal links name its own base URL.
  const world = await getWorld();
  deps = { ...world.deps, tokens: { ...world.deps.tokens } };
  server = createServer(
    createApp(deps, { baseUrl: 'http://127.0.0.1', portalAssetsDir: join(assets, 'portal') }).handler,
  );
  url = await listen(server);
  deps.tokens.issuer = url;
  // The application the portal returns to: `/back` (return_url) and `/done` (success_url).
  app = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><title>Acme app</title><h1>${req.url === '/done' ? 'Setup complete' : 'Settings'}</h1>`);
  });
  appUrl = await listen(app);
  dns = await startDevDns();
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
  await new Promise((done) => app?.close(done));
  await dns?.close();
  if (assets) rmSync(assets, { recursive: true, force: true });
});

describe('the admin portal in a browser', () => {
  it('verifies a domain end to end and lands on success_url; a reused link shows a readable page', async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'Portal Corp' });
    const name = uniqueDomain('portal');

    const { link } = await workos.adminPortal.generateLink({
      organization: organization.id,
      intent: 'domain_verification',
      returnUrl: `${appUrl}/back`,
      successUrl: `${appUrl}/done`,
    });
    expect(link.startsWith(`${url}/portal/launch?apiToken=`)).toBe(true);

    const opened = await openPage(browser, url, { viewport: { width: 1100, height: 760 }, timeoutMs: 30_000 });
    const { page } = opened;
    const launch = await page.goto(link);
    expect(launch?.status()).toBe(200);
    expect(page.url()).toBe(`${url}/portal/domain_verification`);
    expect(launch?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect(page.locator('a.portal-back').getAttribute('href')).resolves.toBe(`${appUrl}/back`);

    // The IT admin adds the domain in the page; the page shows its TXT record and live state.
    await page.getByLabel('Domain').fill(name);
    await page.getByRole('button', { name: 'Add a domain' }).click();
    const shown = page.locator(`#portal-status li[data-domain="${name}"]`);
    await shown.waitFor({ timeout: 15_000 });
    expect(await shown.getAttribute('data-state')).toBe('pending');
    const [domain] = (await workos.organizations.getOrganization(organization.id)).domains;
    if (!domain) throw new Error('the domain was not stored');
    const record = shown.locator('code.portal-record');
    const recordName = (await record.getAttribute('data-name')) ?? '';
    const recordValue = (await record.getAttribute('data-value')) ?? '';
    expect(recordName).toBe(`${domain.verificationPrefix}.${name}`);
    expect(recordValue).toBe(`verification_token=${domain.verificationToken}`);
    // The official widget lists the domain too (rows 15-17, with the portal token).
    await page.locator('#portal-root').getByText(name).first().waitFor({ timeout: 15_000 });
    await expect(page.locator('#portal-root').getByText('Verification pending').count()).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-domain-verification.png'), fullPage: true });
    // The DNS providers' logos (a CDN's, refused here) are the widget's own generic globe, from the page itself.
    const providerIcons = await page.evaluate(() => {
      const themed = getComputedStyle(document.querySelector('.radix-themes') as Element);
      return ['aws', 'cloudflare', 'godaddy', 'google'].map((p) =>
        themed.getPropertyValue(`--provider-icon-${p}`).trim(),
      );
    });
    for (const icon of providerIcons) expect(icon).toMatch(/^url\("data:image\/svg\+xml,/);

    // Publish the record on the loopback DNS server and run the DNS worker's check once.
    dns.set(recordName, { txt: [recordValue] });
    const worker = new VerificationWorker(env.deps, {
      servers: [dns.address],
      timeoutMs: 2_000,
      environmentId: env.environmentId,
    });
    expect(await worker.tick()).toBe(1);
    const verified = await workos.organizationDomains.getOrganizationDomain(domain.id);
    expect(verified.state).toBe('verified');

    // The page sees it and sends the browser to success_url.
    await page.waitForURL(`${appUrl}/done`, { timeout: 20_000 });
    await expect(page.locator('h1').innerText()).resolves.toBe('Setup complete');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-success.png') });

    // The link was used: opening it again shows why, and sets no session.
    const reused = await page.goto(link);
    expect(reused?.status()).toBe(410);
    await expect(page.locator('h1').innerText()).resolves.toBe('This link has already been used');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-link-used.png') });

    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(unexpected(opened.cspViolations)).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 90_000);

  it("the domain page: one add-domain control, no empty heading; the widget's link opens the same session in a new tab", async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'One Tab Corp' });
    const { link } = await workos.adminPortal.generateLink({
      organization: organization.id,
      intent: 'domain_verification',
      returnUrl: `${appUrl}/back`,
      successUrl: `${appUrl}/done`,
    });
    const opened = await openPage(browser, url, { viewport: { width: 1100, height: 760 }, timeoutMs: 30_000 });
    const { page, context } = opened;
    await page.goto(link);
    const root = page.locator('#portal-root');
    await root.getByText("You haven't added any verified domains yet.").waitFor({ timeout: 15_000 });
    // One control to add a domain (the page's form), and no heading over an empty list of records.
    const addControls = page.getByRole('button', { name: /^add (a )?domain/i });
    await expect(addControls.count()).resolves.toBe(1);
    await expect(addControls.first().innerText()).resolves.toBe('Add a domain');
    await expect(page.getByRole('heading', { name: 'DNS records to publish' }).count()).resolves.toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-domain-empty.png'), fullPage: true });

    // The widget's own button (shown again here) asks for a link with the portal token and opens it
    // by form POST in a new tab: the same session's page, with its Back link, and no new session.
    await page.addStyleTag({ content: '#portal-root [data-woswidgets-element] { display: inline-flex !important; }' });
    const [second] = await Promise.all([
      context.waitForEvent('page'),
      root.getByRole('button', { name: 'Add domain' }).click(),
    ]);
    await second.waitForURL(`${url}/portal/domain_verification`);
    await expect(second.locator('a.portal-back').getAttribute('href')).resolves.toBe(`${appUrl}/back`);
    const sessions = await env.deps.db
      .select()
      .from(portalSessions)
      .where(eq(portalSessions.environmentId, env.environmentId));
    expect(sessions).toHaveLength(1);
    await second.close();

    // Back in the first tab, the session still works: adding a domain passes the CSRF check.
    const name = uniqueDomain('onetab');
    await page.getByLabel('Domain').fill(name);
    await page.getByRole('button', { name: 'Add a domain' }).click();
    await page.locator(`#portal-status li[data-domain="${name}"]`).waitFor({ timeout: 15_000 });
    await expect(page.locator('.portal-add-message').innerText()).resolves.toBe('');
    await page.getByRole('heading', { name: 'DNS records to publish' }).waitFor();
    await expect(page.locator('a.portal-back').getAttribute('href')).resolves.toBe(`${appUrl}/back`);
    // The widget's dialogs render outside #portal-root and keep their buttons.
    await root.getByText(name).first().waitFor({ timeout: 15_000 });
    await root.getByRole('button', { name: 'Domain actions' }).first().click();
    await page.getByRole('menuitem', { name: 'Remove domain' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('alertdialog').waitFor({ state: 'hidden' });
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(unexpected(opened.cspViolations)).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 90_000);

  it('opens the SSO page by the form POST of the official widgets: read-only, then the connection with a local icon', async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'SSO Corp' });
    const { link } = await workos.adminPortal.generateLink({ organization: organization.id, intent: 'sso' });
    const opened = await openPage(browser, url, { viewport: { width: 1100, height: 760 }, timeoutMs: 30_000 });
    const { page } = opened;
    // As the widgets do: strip apiToken from the link and submit it in a hidden form.
    const target = new URL(link);
    const apiToken = target.searchParams.get('apiToken') ?? '';
    target.searchParams.delete('apiToken');
    await page.setContent(
      `<form method="post" action="${target.href}"><input type="hidden" name="apiToken" value="${apiToken}"></form>`,
    );
    await Promise.all([
      page.waitForURL(`${url}/portal/sso`),
      page.locator('form').evaluate((f: HTMLFormElement) => f.submit()),
    ]);
    // No connection yet: the widget's empty state (not its loading skeleton).
    const root = page.locator('#portal-root');
    await root.getByText("You haven't set up Single Sign-On yet.").waitFor({ timeout: 15_000 });
    // Read-only: the widget's "Set up SSO" (a link to this very page) is not offered.
    await expect(root.getByRole('button', { name: 'Set up SSO' }).count()).resolves.toBe(0);

    // Once the organization has a connection, the page shows it, its tile drawn from the page itself.
    const admin = await adminCaller();
    await admin.connections.create({
      environment: env.environmentId,
      organization_id: organization.id,
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'active',
    });
    await page.reload();
    await root.getByText('Connected').waitFor({ timeout: 15_000 });
    await expect(root.getByRole('button', { name: 'Manage' }).count()).resolves.toBe(0);
    const icon = root.locator('.woswidgets-provider-icon[data-provider]').first();
    expect(await icon.getAttribute('data-provider')).toBe('okta');
    await expect(icon.evaluate((el) => getComputedStyle(el).backgroundImage)).resolves.toMatch(
      /^url\("data:image\/svg\+xml,/,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-sso.png'), fullPage: true });
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(unexpected(opened.cspViolations)).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 60_000);
  it('sets up SAML single sign-on alone: provider, SP facts, IdP metadata pasted, certificates, a test sign-in through the loopback IdP activates it', async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    // Its verified domain: the people the test sign-in provisions are of it (the domain policy).
    const domain = uniqueDomain('samlcorp');
    const organization = await workos.organizations.createOrganization({
      name: 'SAML Corp',
      domainData: [{ domain, state: DomainDataState.Verified }],
    });
    // The application's default redirect URI: where the test sign-in's code goes.
    const admin = await adminCaller();
    await admin.redirectUris.create({ environment: env.environmentId, uri: `${appUrl}/callback`, default: true });
    const idp = await startDevIdp();
    try {
      const { link } = await workos.adminPortal.generateLink({ organization: organization.id, intent: 'sso' });
      const opened = await openPage(browser, url, { viewport: { width: 1100, height: 1400 }, timeoutMs: 30_000 });
      const { page } = opened;
      await page.goto(link);
      expect(page.url()).toBe(`${url}/portal/sso`);
      const status = page.getByTestId('portal-status');
      await status.getByText('Set up single sign-on').waitFor({ timeout: 15_000 });

      // The IT admin picks the provider; the connection exists, inactive, with what to paste.
      await page.getByLabel('Other SAML 2.0 provider').check();
      await page.getByRole('button', { name: 'Start setup' }).click();
      const panel = page.getByTestId('portal-sso-connection');
      await panel.waitFor({ timeout: 15_000 });
      const id = (await panel.getAttribute('data-connection')) ?? '';
      expect(id).toMatch(/^conn_/);
      expect(await panel.locator('code[data-copy="acs_url"]').innerText()).toBe(`${url}/sso/saml/acs/${id}`);
      expect(await panel.locator('code[data-copy="entity_id"]').innerText()).toBe(`${url}/sso/saml/${id}`);
      expect(await panel.locator('code[data-copy="metadata_url"]').innerText()).toBe(`${url}/sso/saml/metadata/${id}`);
      await panel.getByText('Setup in progress').waitFor();
      expect(await panel.getByTestId('portal-sso-test').count()).toBe(0);

      // Bad metadata: the SAML module's reason, nothing configured.
      await page
        .getByLabel('IdP metadata XML')
        .fill('<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>');
      await page.getByRole('button', { name: 'Save identity provider' }).click();
      await panel.getByText('no EntityDescriptor with an IDPSSODescriptor').waitFor();
      const [before] = await env.deps.db.select().from(connections).where(eq(connections.id, id));
      expect(before).toMatchObject({ state: 'inactive', samlIdpSsoUrl: null, samlIdpCertificates: [] });

      // The loopback IdP's metadata, pasted: configured, its certificate shown, a test link offered.
      await page.getByLabel('IdP metadata XML').fill(idp.metadataXml);
      await page.getByRole('button', { name: 'Save identity provider' }).click();
      const configured = page.getByTestId('portal-sso-connection');
      await configured.getByText('Configured: test sign-in to activate').waitFor({ timeout: 15_000 });
      await configured
        .getByTestId('portal-sso-certificates')
        .getByText(/Valid until/)
        .waitFor();
      const [stored] = await env.deps.db.select().from(connections).where(eq(connections.id, id));
      expect(stored).toMatchObject({
        organizationId: organization.id,
        connectionType: 'GenericSAML',
        state: 'inactive',
        samlIdpEntityId: idp.entityId,
        samlIdpSsoUrl: idp.ssoUrl,
      });
      expect(stored?.samlIdpCertificates).toHaveLength(1);
      await page.screenshot({ path: join(SCREENSHOTS, 'portal-sso-configured.png'), fullPage: true });

      // "Test sign-in": /sso/authorize, the IdP's login page, the POST back, the app with a code.
      const test = new URL((await configured.getByTestId('portal-sso-test').getAttribute('href')) ?? '');
      expect(`${test.origin}${test.pathname}`).toBe(`${url}/sso/authorize`);
      expect(test.searchParams.get('connection')).toBe(id);
      await page.goto(test.href);
      await page.getByLabel('E-mail').fill(`it.admin@${domain}`);
      await Promise.all([
        page.waitForURL((u) => u.href.startsWith(`${appUrl}/callback`)),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      const landed = new URL(page.url());
      expect(landed.searchParams.get('error_description'), landed.href).toBeNull();
      expect(landed.searchParams.get('code')).toBeTruthy();
      expect(landed.searchParams.get('state')).toBe('atrium_portal_test');
      const [active] = await env.deps.db.select().from(connections).where(eq(connections.id, id));
      expect(active?.state).toBe('active');

      // Back in the portal: the connection is active, and the widget shows it connected.
      await page.goto(`${url}/portal/sso`);
      await page.getByTestId('portal-sso-connection').getByText('Active', { exact: true }).waitFor({ timeout: 15_000 });
      await page.locator('#portal-root').getByText('Connected').waitFor({ timeout: 15_000 });
      await page.screenshot({ path: join(SCREENSHOTS, 'portal-sso-active.png'), fullPage: true });
      await opened.close();
      expect(opened.outside).toEqual([]);
      expect(unexpected(opened.cspViolations)).toEqual([]);
      expect(opened.pageErrors).toEqual([]);
    } finally {
      await idp.close();
    }
  }, 120_000);

  it('sets up directory sync: Entra ID chosen, base URL and token shown once with the steps, then counts, then a rotation', async (ctx) => {
    if (!browser) return ctx.skip(skipReason);
    const env = await newEnvironment();
    const port = Number(new URL(url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false });
    const organization = await workos.organizations.createOrganization({ name: 'Directory Corp' });
    const { link } = await workos.adminPortal.generateLink({
      organization: organization.id,
      intent: 'dsync',
      returnUrl: `${appUrl}/back`,
    });
    const opened = await openPage(browser, url, { viewport: { width: 1100, height: 900 }, timeoutMs: 30_000 });
    const { page } = opened;
    await page.goto(link);
    expect(page.url()).toBe(`${url}/portal/dsync`);
    const root = page.locator('#portal-root');
    // The official DirectorySync widget, with the portal token: no directory yet.
    await root.getByText("You haven't set up a directory yet.").waitFor({ timeout: 15_000 });

    // The IT admin chooses Entra ID, names the directory and creates it.
    await page.getByLabel('Microsoft Entra ID').check();
    await page.getByLabel('Directory name').fill('Entra employees');
    await page.getByRole('button', { name: 'Create directory' }).click();
    const shown = page.getByTestId('portal-directory-token');
    await shown.waitFor({ timeout: 15_000 });
    const base = (await shown.locator('code[data-copy="scim_base_url"]').innerText()).trim();
    const token = (await shown.locator('code[data-copy="bearer_token"]').innerText()).trim();
    const [stored] = await env.deps.db
      .select()
      .from(directories)
      .where(eq(directories.environmentId, env.environmentId));
    expect(stored).toMatchObject({ organizationId: organization.id, type: 'azure scim v2.0', name: 'Entra employees' });
    expect(base).toBe(`${url}/scim/v2/${stored?.id}`);
    expect(token).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    expect(stored?.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    await shown.getByRole('button', { name: 'Copy base URL' }).waitFor();
    await shown.getByRole('button', { name: 'Copy token' }).waitFor();
    // Entra ID's steps, with the values where they go.
    const steps = (await shown.innerText()).replace(/\s+/g, ' ');
    expect(steps).toContain('Set it up in Microsoft Entra ID');
    expect(steps).toContain(`Under Admin Credentials, Tenant URL: ${base}`);
    expect(steps).toMatch(
      /Provisioning Mode to Automatic.*Secret Token.*Test Connection.*Mappings.*Start provisioning/,
    );
    expect(steps).toContain('shown only this once');
    const item = page.locator(`li[data-directory="${stored?.id}"]`);
    await item.waitFor({ timeout: 15_000 });
    expect(await item.getAttribute('data-state')).toBe('unlinked');
    // The widget, remounted, shows the directory being set up.
    await root.getByText('Setup in progress...').waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-dsync-created.png'), fullPage: true });

    // Entra ID provisions: the page follows (state, counts), and the widget shows the counts.
    await pushToDirectory(env, stored?.id ?? '', { active: 2, inactive: 1, groups: 1 });
    await page.locator(`li[data-directory="${stored?.id}"][data-state="linked"]`).waitFor({ timeout: 15_000 });
    const counts = page.locator(`li[data-directory="${stored?.id}"] .portal-counts`);
    expect(await counts.getAttribute('data-active')).toBe('2');
    expect(await counts.getAttribute('data-inactive')).toBe('1');
    expect(await counts.getAttribute('data-groups')).toBe('1');
    expect(await counts.innerText()).toMatch(/^2 active users, 1 inactive, 1 group; last sync /);

    // Afterwards the token is never shown again: not after a reload, not in the widget.
    await page.reload();
    await root.getByText('Connected').waitFor({ timeout: 15_000 });
    expect((await root.innerText()).replace(/\s+/g, ' ')).toContain('2 users ∙ 1 group ∙ Last sync');
    await page.locator(`li[data-directory="${stored?.id}"]`).waitFor();
    expect(await page.content()).not.toContain(token);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-dsync-linked.png'), fullPage: true });

    // Rotate: confirmed, a new token is shown once; the stored hash is the new one's.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await shown.getByText('New token for Entra employees').waitFor({ timeout: 15_000 });
    const rotated = (await shown.locator('code[data-copy="bearer_token"]').innerText()).trim();
    expect(rotated).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    expect(rotated).not.toBe(token);
    const [after] = await env.deps.db
      .select()
      .from(directories)
      .where(eq(directories.id, stored?.id ?? ''));
    expect(after?.tokenHash).toBe(createHash('sha256').update(rotated).digest('hex'));
    await opened.close();
    expect(opened.outside).toEqual([]);
    expect(unexpected(opened.cspViolations)).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
  }, 90_000);
});
