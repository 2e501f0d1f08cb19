import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connections, newId, organizationApiKeys, ssoAuthorizations, users } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';
import {
  createSmtpMailer,
  type DevDnsServer,
  type DevSmtpServer,
  openGeoLocator,
  startDevDns,
  startDevSmtp,
  VerificationWorker,
} from '@atrium/server';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import {
  launchChromium,
  listen,
  type OpenedPage,
  openPage,
  screenshot,
  serveWidgetPage,
  type WidgetPage,
} from '../helpers/browser.ts';
import { type ClientSetup, clientFor, clientSetup } from '../helpers/client.ts';
import { DSYNC_ROLE, DSYNC_SCOPE, directoryWithUsers, ensureDsyncRole } from '../helpers/directories.ts';
import { storedEventData } from '../helpers/events.ts';
import { cityRecord, mmdbOf } from '../helpers/mmdb.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { freePort, type SpawnedServer, spawnServer } from '../helpers/spawn-server.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { getWorld, HttpClient, newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * The official @workos-inc/widgets 1.18 components, unchanged, in headless Chromium, against an
 * Atrium API on another loopback port (so every call is a real cross-origin request with its
 * preflight). Each step asserts what the page shows and what Atrium stored. The API's deps send
 * mail to a loopback SMTP server and run on a clock the tests move.
 */

const launched = await launchChromium();

let api: { url: string; close(): Promise<void> };
let page: WidgetPage;
/** The README's React page, on its own origin (also allowed), and its entry file. */
let readme: WidgetPage;
let readmeEntry = '';
let mailbox: DevSmtpServer;
let dns: DevDnsServer;
let deps: Deps;
/** How far the API's clock is ahead of the real one. */
let clockOffsetMs = 0;
/** DNS_VERIFICATION_PERIOD_SECONDS of the test's API: a domain fails a minute (of its clock) after its check starts. */
const VERIFICATION_PERIOD_SECONDS = 60;
/** What the page's token function answers, per test. */
let mint: (widget: string) => Promise<string> = async () => '';

beforeAll(async () => {
  if (!launched.browser) return;
  const world = await getWorld();
  mailbox = await startDevSmtp();
  dns = await startDevDns();
  const config = { ...world.deps.config, dnsVerificationPeriodSeconds: VERIFICATION_PERIOD_SECONDS };
  deps = {
    ...world.deps,
    now: () => new Date(Date.now() + clockOffsetMs),
    mailer: createSmtpMailer({ url: mailbox.url, from: 'Acme <no-reply@acme.test>', timeoutMs: 5_000 }),
    config,
  };
  page = await serveWidgetPage((widget) => mint(widget));
  readme = await serveWidgetPage(
    (widget) => mint(widget),
    () => readmeEntry,
  );
  // ATRIUM_CORS_ORIGINS: the two pages' origins only.
  const corsOrigins = [page.origin, readme.origin];
  api = await listen(createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false, corsOrigins }).handler);
  readmeEntry = readmePage(new URL(api.url).port);
});

afterEach(() => {
  clockOffsetMs = 0;
});

afterAll(async () => {
  await launched.browser?.close();
  await page?.close();
  await readme?.close();
  if (readmeEntry) rmSync(dirname(readmeEntry), { recursive: true, force: true });
  await api?.close();
  await mailbox?.close();
  await dns?.close();
});

/**
 * Opens the fixture page with `widget` against the test's API (closeClean then checks what it did).
 * If the test fails, it prints every request the page made to the API, with its status.
 */
async function open(widget: string, params: Record<string, string> = {}): Promise<OpenedPage> {
  const opened = await openPage(launched.browser!, api.url);
  onTestFailed(() => console.error(`the page's requests to the API:\n${opened.network.join('\n')}`));
  await opened.page.goto(page.url(widget, api.url, params));
  return opened;
}

/**
 * The widgets' own stylesheet (provider-icon.css) draws name-server and identity-provider icons
 * from WorkOS's CDN: refused like every request off loopback, and the only ones expected.
 */
const WIDGET_ICON_CDN = /^https:\/\/(cdn\.workos\.com\/provider-icons\/|images\.workoscdn\.com\/images\/)/;

async function closeClean(opened: OpenedPage): Promise<void> {
  await opened.close();
  expect(opened.outside.filter((url) => !WIDGET_ICON_CDN.test(url))).toEqual([]);
  expect(opened.pageErrors).toEqual([]);
  expect(opened.failed).toEqual([]);
}

/** A member whose role holds these widget scopes and `posts:read`, with a widget token asking for them. */
async function apiKeysMember(env: TestEnvironment, scopes: string[]): Promise<ClientSetup> {
  // The widgets' scopes are system permissions; `posts:read` is the app's.
  expect((await env.http.post('/authorization/permissions', { slug: 'posts:read', name: 'posts:read' })).status).toBe(
    201,
  );
  expect((await env.http.post('/authorization/roles', { slug: 'key-holder', name: 'Key holder' })).status).toBe(201);
  await env.http.put('/authorization/roles/key-holder/permissions', { permissions: [...scopes, 'posts:read'] });
  return clientSetup(env, { scopes, roleSlug: 'key-holder' });
}

const keysOf = (env: TestEnvironment) =>
  env.deps.db.select().from(organizationApiKeys).where(eq(organizationApiKeys.environmentId, env.environmentId));

async function addMembership(env: TestEnvironment, userId: string, name: string): Promise<string> {
  const org = await env.http.post('/organizations', { name });
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: userId,
    organization_id: org.body.id,
  });
  expect(membership.status).toBe(201);
  return org.body.id;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The README's React page (the first tsx block of "## With the official WorkOS Widgets"), saved
 * under .atrium/ (so its imports resolve in this checkout) with the test API's port for 8080.
 */
function readmePage(port: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## With the official WorkOS Widgets'));
  const block = section.match(/```tsx\n([\s\S]*?)\n```/)?.[1];
  if (!block) throw new Error('README has no widget page');
  mkdirSync(join(ROOT, '.atrium'), { recursive: true });
  const file = join(mkdtempSync(join(ROOT, '.atrium', 'readme-page-')), 'page.tsx');
  writeFileSync(file, block.replace(/\b8080\b/g, port));
  return file;
}

/** The visible text of the page. */
const textOf = (p: Page) => p.locator('body').innerText();

/** The environment's API key against the test's API server (whose clock the tests move). */
const apiOf = (env: TestEnvironment) => new HttpClient(api.url, { Authorization: `Bearer ${env.apiKey}` });

/** A widget token minted by the test's API server (so on its clock), as a backend would with the SDK. */
async function widgetToken(env: TestEnvironment, organizationId: string, userId: string, scopes: string[]) {
  const res = await apiOf(env).post('/widgets/token', { organization_id: organizationId, user_id: userId, scopes });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/**
 * An operation-20 client token (a session) minted by the test's API server: what the session-kept
 * flows (UserProfile's e-mail change, UserSecurity's password change) need; a widget token is none.
 */
async function sessionToken(env: TestEnvironment, organizationId: string, userId: string) {
  const res = await apiOf(env).post('/client/token', { organization_id: organizationId, user_id: userId });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/** A user of the organization with `roleSlug`, made through the API. */
async function member(
  env: TestEnvironment,
  organizationId: string,
  firstName: string,
  lastName: string,
  roleSlug = 'member',
) {
  const email = uniqueEmail(firstName.toLowerCase());
  const user = await env.http.post('/user_management/users', { email, first_name: firstName, last_name: lastName });
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: user.body.id,
    organization_id: organizationId,
    role_slug: roleSlug,
  });
  expect(membership.status).toBe(201);
  return { userId: user.body.id as string, email, membershipId: membership.body.id as string };
}

/** The organization's memberships as stored, by user id. */
async function storedMemberships(env: TestEnvironment, organizationId: string) {
  const res = await env.http.get(
    `/user_management/organization_memberships?organization_id=${organizationId}&limit=100`,
  );
  expect(res.status).toBe(200);
  return new Map<string, { status: string; role: { slug: string }; roles: { slug: string }[] }>(
    res.body.data.map((m: any) => [m.user_id, m]),
  );
}

/** The table row of the users table that shows `email`. */
const rowOf = (p: Page, email: string) => p.getByRole('row').filter({ hasText: email });

describe.skipIf(!launched.browser)('the official widgets in headless Chromium', () => {
  it("OrganizationSwitcher lists the caller's organizations, the token's current, and switching is the host's call", async () => {
    const env = await newEnvironment();
    const me: ClientSetup = await clientSetup(env);
    const orgName = (await env.http.get(`/organizations/${me.organizationId}`)).body.name as string;
    const zeta = await addMembership(env, me.userId, 'Zeta Corp');
    await addMembership(env, me.userId, 'Yankee Ltd');
    // Another user's organization is never listed.
    await clientSetup(env);
    mint = async () => me.token;

    const opened = await open('organization-switcher');
    const { page: p } = opened;
    // The trigger shows the current organization (the token's).
    const trigger = p.getByRole('button', { name: orgName });
    await trigger.waitFor();
    await screenshot(p, 'organization-switcher');
    await trigger.click();
    const menu = p.getByRole('menu');
    await menu.waitFor();
    const items = (await menu.getByRole('menuitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    // The current one first, marked; the others as the API ordered them.
    expect(items).toEqual([`${orgName} (current)`, 'Yankee Ltd', 'Zeta Corp']);
    await screenshot(p, 'organization-switcher-open');

    // What was stored: exactly the user's active memberships.
    const stored = await env.http.get(`/user_management/organization_memberships?user_id=${me.userId}&limit=100`);
    expect(stored.body.data.map((m: { organization_name: string }) => m.organization_name).sort()).toEqual(
      [orgName, 'Yankee Ltd', 'Zeta Corp'].sort(),
    );

    await menu.getByRole('menuitem', { name: 'Zeta Corp' }).click();
    await expect.poll(() => p.evaluate(() => (window as any).atrium.switched)).toEqual([zeta]);
    expect(opened.apiCalls).toContainEqual({
      method: 'GET',
      path: '/_widgets/UserManagement/organizations',
      status: 200,
    });
    await closeClean(opened);
  });

  it('a page on an origin the API does not allow gets nothing: the browser enforces CORS', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env);
    const stranger = await serveWidgetPage(async () => me.token);
    const opened = await openPage(launched.browser!, api.url);
    try {
      await opened.page.goto(stranger.url('organization-switcher', api.url, { token: me.token }));
      await expect.poll(() => opened.failed.length).toBeGreaterThan(0);
      expect(opened.failed[0]).toContain(`${api.url}/_widgets/UserManagement/organizations`);
      expect(await opened.page.getByText(/^Org /).count()).toBe(0);
      expect(opened.outside).toEqual([]);
    } finally {
      await opened.close();
      await stranger.close();
    }
  });

  it("the README's React page shows the switcher, the users table and the sessions against the API", async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { roleSlug: 'admin' });
    const orgName = (await env.http.get(`/organizations/${me.organizationId}`)).body.name as string;
    // One widget token for the page's three widgets; the user's session in the app (an
    // operation-20 token's) is the page's "This device", passed as currentSessionId.
    const token = await widgetToken(env, me.organizationId, me.userId, ['widgets:users-table:manage']);
    mint = async () => token;
    const session = decodeJwt(await sessionToken(env, me.organizationId, me.userId)).sid as string;
    const opened = await openPage(launched.browser!, api.url);
    await opened.page.goto(readme.url('readme', api.url, { session }));
    await opened.page.getByRole('button', { name: orgName }).waitFor();
    await rowOf(opened.page, me.email).waitFor();
    await opened.page.getByText('This device').waitFor();
    await screenshot(opened.page, 'readme-page');
    // The token came from the page's backend endpoint (once per widget type, again after a 403).
    expect(readme.tokenRequests.length).toBeGreaterThanOrEqual(3);
    await closeClean(opened);
  });

  it('UsersManagement lists the members, invites by e-mail (delivered over SMTP), changes a role and removes a member', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { roleSlug: 'admin' });
    const grace = await member(env, me.organizationId, 'Grace', 'Hopper');
    const alan = await member(env, me.organizationId, 'Alan', 'Turing');
    // Someone of another organization is never listed.
    const stranger = await clientSetup(env);
    mint = () => widgetToken(env, me.organizationId, me.userId, ['widgets:users-table:manage']);

    const opened = await open('users-management');
    const { page: p } = opened;
    for (const email of [me.email, grace.email, alan.email]) await rowOf(p, email).waitFor();
    expect(await rowOf(p, stranger.email).count()).toBe(0);
    await expect
      .poll(async () => (await rowOf(p, grace.email).innerText()).replace(/\s+/g, ' '))
      .toMatch(/Grace Hopper/);
    await screenshot(p, 'users-management');
    expect([...(await storedMemberships(env, me.organizationId)).keys()].sort()).toEqual(
      [me.userId, grace.userId, alan.userId].sort(),
    );

    // Invite: the dialog, the new row, the stored invitation and the delivered e-mail.
    const invitee = uniqueEmail('invitee');
    await p.getByRole('button', { name: 'Invite user' }).click();
    const invite = p.getByRole('dialog');
    await invite.getByLabel('Email address').fill(invitee);
    await invite.getByRole('button', { name: 'Invite', exact: true }).click();
    await rowOf(p, invitee).waitFor();
    expect(await rowOf(p, invitee).innerText()).toMatch(/Invited/);
    await screenshot(p, 'users-management-invited');
    const invitations = await env.http.get(`/user_management/invitations?organization_id=${me.organizationId}`);
    expect(invitations.body.data).toEqual([
      expect.objectContaining({
        email: invitee,
        state: 'pending',
        organization_id: me.organizationId,
        role_slug: 'member',
      }),
    ]);
    const mail = await mailbox.next();
    expect(mail.to).toMatchObject({ text: invitee });

    // Edit role: Grace becomes an admin (checkboxes when the server enables several roles per member).
    await rowOf(p, grace.email).getByRole('button', { name: 'User actions' }).click();
    await p.getByRole('menuitem', { name: /^Edit roles?$/ }).click();
    const edit = p.getByRole('dialog');
    await edit.getByRole('button', { name: 'Save' }).waitFor();
    if ((await edit.getByRole('checkbox').count()) > 0) {
      await edit.getByRole('checkbox', { name: /^Admin/ }).click();
      await edit.getByRole('checkbox', { name: /^Member/ }).click();
    } else {
      await edit.getByRole('combobox').click();
      await p.getByRole('option', { name: 'Admin' }).click();
    }
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => rowOf(p, grace.email).innerText()).toMatch(/Admin/);
    expect(await rowOf(p, grace.email).innerText()).not.toMatch(/Member/);
    const graceStored = (await storedMemberships(env, me.organizationId)).get(grace.userId);
    expect(graceStored?.roles.map((r) => r.slug)).toEqual(['admin']);

    // Remove: Alan's row goes, and so does his membership.
    await rowOf(p, alan.email).getByRole('button', { name: 'User actions' }).click();
    await p.getByRole('menuitem', { name: 'Remove user' }).click();
    await p.getByRole('alertdialog').getByRole('button', { name: 'Remove', exact: true }).click();
    // While the dialog is open the table behind it is hidden from getByRole (Alan's row counts 0): wait until it closed.
    await p.getByRole('alertdialog').waitFor({ state: 'hidden' });
    await expect.poll(() => rowOf(p, alan.email).count()).toBe(0);
    await screenshot(p, 'users-management-after');
    const after = await storedMemberships(env, me.organizationId);
    expect(after.has(alan.userId)).toBe(false);
    expect(after.get(me.userId)?.role.slug).toBe('admin');
    await closeClean(opened);
  });

  it('UsersManagement shows the server’s refusal when the organization may send no more invites', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { roleSlug: 'admin' });
    mint = () => widgetToken(env, me.organizationId, me.userId, ['widgets:users-table:manage']);
    // This test's quota: one pending invitation per organization (the API's config, restored after).
    deps.config.quotas = { pendingInvitationsPerOrganization: 1 };
    try {
      const opened = await open('users-management');
      const { page: p } = opened;
      await rowOf(p, me.email).waitFor();
      const inviteOne = async (email: string) => {
        await p.getByRole('button', { name: 'Invite user' }).click();
        const dialog = p.getByRole('dialog');
        await dialog.getByLabel('Email address').fill(email);
        await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
        return dialog;
      };
      const first = uniqueEmail('first');
      await inviteOne(first);
      await rowOf(p, first).waitFor();
      expect((await mailbox.next()).to).toMatchObject({ text: first });

      const second = uniqueEmail('second');
      const dialog = await inviteOne(second);
      // The widget shows this one message of the server as is (WIDGETS-API.md, UsersManagement).
      await dialog
        .getByRole('paragraph')
        .filter({ hasText: 'This organization is not allowed to send invites.' })
        .waitFor();
      await screenshot(p, 'users-management-invites-blocked');
      const stored = await env.http.get(`/user_management/invitations?organization_id=${me.organizationId}`);
      expect(stored.body.data.map((i: { email: string }) => i.email)).toEqual([first]);
      await closeClean(opened);
    } finally {
      deps.config.quotas = undefined;
    }
  });

  it('AdminPortalDomainVerification shows each state, restarts only a failed domain, which then verifies over DNS', async () => {
    const env = await newEnvironment();
    const verified = uniqueDomain('verified');
    const failing = uniqueDomain('failing');
    const org = await env.http.post('/organizations', {
      name: 'Domains Inc',
      domain_data: [
        { domain: verified, state: 'verified' },
        { domain: failing, state: 'pending' },
      ],
    });
    expect(org.status).toBe(201);
    const me = await member(env, org.body.id, 'Dana', 'Scully', 'admin');
    const failingId = org.body.domains.find((d: any) => d.domain === failing).id;
    expect((await apiOf(env).post(`/organization_domains/${failingId}/verify`)).status).toBe(201);
    // The verification period passes with no TXT record published: the worker fails the domain.
    clockOffsetMs += VERIFICATION_PERIOD_SECONDS * 1_000 + 1_000;
    const pending = await apiOf(env).post('/organization_domains', {
      organization_id: org.body.id,
      domain: uniqueDomain('pending'),
    });
    expect(pending.status).toBe(201);
    // The pending domain's zone is served by Cloudflare: its first check stores its name servers.
    dns.set(pending.body.domain, { ns: ['ada.ns.cloudflare.com', 'bob.ns.cloudflare.com'] });
    expect((await apiOf(env).post(`/organization_domains/${pending.body.id}/verify`)).status).toBe(201);
    const worker = new VerificationWorker(deps, {
      servers: [dns.address],
      timeoutMs: 500,
      environmentId: env.environmentId,
    });
    await worker.tick();
    const stateOf = async (domain: string) =>
      (await apiOf(env).get(`/organizations/${org.body.id}`)).body.domains.find((d: any) => d.domain === domain)?.state;
    expect(await stateOf(failing)).toBe('failed');
    expect(await stateOf(pending.body.domain)).toBe('pending');
    expect(await stateOf(verified)).toBe('verified');
    mint = () => widgetToken(env, org.body.id, me.userId, ['widgets:domain-verification:manage']);

    const opened = await open('domain-verification');
    const { page: p } = opened;
    // A domain's item: the innermost element holding its name and its buttons.
    const item = (domain: string) =>
      p
        .locator('div')
        .filter({ has: p.getByText(domain, { exact: true }) })
        .filter({ has: p.getByRole('button') })
        .last();
    await p.getByText(failing).waitFor();
    expect((await textOf(p)).replace(/\s+/g, ' ')).toMatch(new RegExp(`${failing}.*Verification failed`));
    expect((await textOf(p)).replace(/\s+/g, ' ')).toMatch(new RegExp(`${pending.body.domain}.*Verification pending`));
    expect((await textOf(p)).replace(/\s+/g, ' ')).toMatch(new RegExp(`${verified}.*Verified`));
    await screenshot(p, 'domain-verification');
    // The provider's icon tile is shown for the Cloudflare domain only; the others show the generic
    // one (the widget keeps every provider's tile in the page, visually hidden but the one shown).
    const shownProvider = (domain: string) =>
      item(domain)
        .locator('[data-provider]')
        .evaluateAll((tiles) =>
          tiles.filter((t) => t.closest('[style*="clip"]') === null).map((t) => t.getAttribute('data-provider')),
        );
    expect(await shownProvider(pending.body.domain)).toEqual(['cloudflare']);
    expect(await shownProvider(failing)).toEqual([]);

    // A pending domain's menu shows its record, with no restart.
    await item(pending.body.domain).getByRole('button', { name: 'Domain actions' }).click();
    await p.getByRole('menuitem', { name: 'View DNS record' }).waitFor();
    expect(await p.getByRole('menuitem', { name: 'Restart verification' }).count()).toBe(0);
    await p.keyboard.press('Escape');

    // The failed domain's menu: Restart verification → its DNS record → Restart verification.
    await item(failing).getByRole('button', { name: 'Domain actions' }).click();
    await p.getByRole('menuitem', { name: 'Restart verification' }).click();
    const dialog = p.getByRole('dialog');
    await dialog.getByText('Host / Name').waitFor();
    await screenshot(p, 'domain-verification-record');
    const [, host, value] =
      (await dialog.innerText()).replace(/\s+/g, ' ').match(/Host \/ Name (\S+) Value (\S+)/) ?? [];
    await dialog.getByRole('button', { name: 'Restart verification' }).click();
    await expect.poll(async () => await item(failing).innerText()).toMatch(/Verification pending/);
    expect(await stateOf(failing)).toBe('pending');

    // The record, exactly as the widget shows it, is published; the worker's next check verifies.
    dns.set(host === '@' ? failing : `${host}.${failing}`, { txt: [value as string] });
    await worker.tick();
    expect(await stateOf(failing)).toBe('verified');
    await p.reload();
    await p.getByText(failing).waitFor();
    await expect.poll(async () => await item(failing).innerText()).toMatch(/Verified/);
    // Verified over DNS, it can only be removed (a manually verified one is LegacyVerified, with a menu).
    await item(failing).getByRole('button', { name: 'Remove domain' }).waitFor();
    expect(await item(failing).getByRole('button', { name: 'Domain actions' }).count()).toBe(0);
    await screenshot(p, 'domain-verification-verified');
    await closeClean(opened);
  });

  it('AdminPortalSsoConnection offers set-up without a connection, and shows the first SSO connection once there is one', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    mint = async () => me.token;
    const opened = await open('sso-connection');
    const { page: p } = opened;
    await p.getByText("You haven't set up Single Sign-On yet.").waitFor();
    await p.getByRole('button', { name: 'Set up SSO' }).waitFor();
    expect((await env.http.get(`/connections?organization_id=${me.organizationId}`)).body.data).toEqual([]);

    const admin = await adminCaller();
    await admin.connections.create({
      environment: env.environmentId,
      organization_id: me.organizationId,
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'active',
    });
    await p.reload();
    await p.getByText('Connected').waitFor();
    await p.getByRole('button', { name: 'Manage' }).waitFor();
    await screenshot(p, 'sso-connection');
    const stored = (await env.http.get(`/connections?organization_id=${me.organizationId}`)).body.data;
    expect(stored).toEqual([expect.objectContaining({ connection_type: 'OktaSAML', name: 'Okta', state: 'active' })]);
    await closeClean(opened);
  });

  it('AdminPortalSsoConnection: "Continue setup" opens an sso portal link, "Connected" with the last session, "Requires action" once every certificate expired', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { scopes: ['widgets:sso:manage'] });
    mint = async () => me.token;
    const admin = await adminCaller();
    const connection = await admin.connections.create({
      environment: env.environmentId,
      organization_id: me.organizationId,
      connection_type: 'GenericSAML',
      name: 'Generic',
      state: 'inactive',
    });
    const opened = await open('sso-connection');
    const { page: p } = opened;
    await p.getByText('Setup in progress').waitFor();

    // "Continue setup": row 19 with intent `sso`, then the link in a new tab (a form POST).
    const linked = p.waitForResponse((r) => r.url().includes('/_widgets/admin-portal/generate-link'));
    const tab = p.context().waitForEvent('page');
    await p.getByRole('button', { name: 'Continue setup' }).click();
    const response = await linked;
    expect(new URL(response.url()).searchParams.get('intent')).toBe('sso');
    expect(response.status()).toBe(201);
    const link = new URL((await response.json()).link);
    await (await tab).close();
    const launchedPortal = await fetch(`${api.url}${link.pathname}`, {
      method: 'POST',
      body: new URLSearchParams({ apiToken: link.searchParams.get('apiToken') ?? '' }),
      redirect: 'manual',
    });
    expect(launchedPortal.status).toBe(303);
    expect(launchedPortal.headers.get('location')).toBe('/portal/sso');

    // A successful sign-in 5 minutes ago activated it (sso_authorizations is what the widget reads).
    const DAY = 86_400_000;
    const pem = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`;
    const certificate = (name: string, notAfter: number) => ({
      pem: pem(name),
      fingerprint_sha256: name,
      not_before: new Date(Date.now() - 400 * DAY).toISOString(),
      not_after: new Date(notAfter).toISOString(),
    });
    await env.deps.db
      .update(connections)
      .set({ state: 'active', samlIdpCertificates: [certificate('valid', Date.now() + 300 * DAY)] })
      .where(eq(connections.id, connection.id));
    await env.deps.db.insert(ssoAuthorizations).values({
      id: newId('ssoAuthorization'),
      environmentId: env.environmentId,
      connectionId: connection.id,
      redirectUri: 'https://app.test/callback',
      state: 'successful',
      expiresAt: new Date(Date.now() + 600_000),
      createdAt: new Date(Date.now() - 5 * 60_000),
    });
    await p.reload();
    await p.getByText('Connected').waitFor();
    await p.getByText('Last session 5 minutes ago').waitFor();
    await screenshot(p, 'sso-connection-last-session');

    // Its only IdP certificate expired: sign-in fails until it is renewed.
    await env.deps.db
      .update(connections)
      .set({ samlIdpCertificates: [certificate('expired', Date.now() - 2 * DAY)] })
      .where(eq(connections.id, connection.id));
    await p.reload();
    await p.getByText('Requires action').waitFor();
    await p.getByText('The SAML response signing certificate expired on').waitFor();
    await p.getByRole('button', { name: 'Manage' }).waitFor();
    await screenshot(p, 'sso-connection-expired');
    await closeClean(opened);
  });

  it('DirectorySync offers set-up without a directory, then shows its provider, state, counts and last sync, with a working portal link', async () => {
    const env = await newEnvironment();
    await ensureDsyncRole(env);
    const me = await clientSetup(env, { scopes: [DSYNC_SCOPE], roleSlug: DSYNC_ROLE });
    mint = async () => me.token;
    const opened = await open('directory-sync');
    const { page: p } = opened;
    await p.getByText("You haven't set up a directory yet.").waitFor();
    const setUp = p.getByRole('link', { name: 'Set up directory' });
    await setUp.waitFor();
    expect(await setUp.getAttribute('href')).toMatch(/\/portal\/launch\?apiToken=[0-9A-Za-z]{43}$/);

    // The identity provider pushes three users (one more, deactivated) and two groups.
    await directoryWithUsers(env, me.organizationId, { active: 3, inactive: 1, groups: 2 });
    await p.reload();
    await p.getByText('Connected').waitFor();
    const text = (await textOf(p)).replace(/\s+/g, ' ');
    expect(text).toContain('Okta');
    expect(text).toMatch(/3 users ∙ 2 groups ∙ Last sync now/);
    await screenshot(p, 'directory-sync');

    // Its main action, "Manage": a new tab on a fresh single-use dsync link of this organization,
    // which opens the admin portal's directory page.
    const manage = p.getByRole('link', { name: 'Manage' });
    expect(await manage.getAttribute('target')).toBe('_blank');
    const href = new URL((await manage.getAttribute('href')) ?? '');
    const launched = await fetch(`${api.url}${href.pathname}${href.search}`, { redirect: 'manual' });
    expect(launched.status).toBe(303);
    expect(launched.headers.get('location')).toBe('/portal/dsync');
    expect(launched.headers.get('set-cookie')).toMatch(/^atrium_portal=portal_session_/);
    await closeClean(opened);
  });

  it('DirectorySync shows "Incorrect permissions" to a member whose role lacks the scope', async () => {
    const env = await newEnvironment();
    const me = await clientSetup(env, { scopes: [DSYNC_SCOPE], roleSlug: 'member' });
    await directoryWithUsers(env, me.organizationId, { active: 1 });
    mint = async () => me.token;
    const opened = await open('directory-sync');
    await opened.page.getByText('Incorrect permissions').waitFor();
    expect(await textOf(opened.page)).not.toContain('Employees');
    await opened.close();
    expect(opened.pageErrors).toEqual([]);
  });

  it('ApiKeys creates a key with a permission, shows its value once and lists it, then revokes it', async () => {
    const env = await newEnvironment();
    const me = await apiKeysMember(env, ['widgets:api-keys:manage']);
    mint = async () => me.token;
    const opened = await open('api-keys');
    const { page: p } = opened;
    await p.getByRole('button', { name: 'Create API key' }).first().click();
    await p.getByLabel('Name').fill('Reporting');
    await p.getByText('posts:read').first().click();
    await p.getByRole('dialog').getByRole('button', { name: 'Create API key' }).click();
    await p.getByText('Save your key').waitFor();
    const [stored] = await keysOf(env);
    expect(stored).toMatchObject({ name: 'Reporting', permissions: ['posts:read'], ownerType: 'organization' });
    await p.getByRole('button', { name: 'Copy and close' }).click();
    await p.getByRole('cell', { name: 'Reporting' }).waitFor();
    await screenshot(p, 'api-keys');

    // Its other action: revoke, confirmed in the dialog.
    await p.getByRole('button', { name: 'API key actions' }).first().click();
    await p.getByRole('menuitem', { name: 'Revoke key' }).click();
    await p.getByRole('alertdialog').getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(async () => (await keysOf(env)).length).toBe(0);
    await closeClean(opened);
  });

  it("UserApiKeys creates the member's own key within their permissions and lists it with its owner", async () => {
    const env = await newEnvironment();
    const me = await apiKeysMember(env, ['widgets:user-api-keys:manage-self']);
    mint = async () => me.token;
    const opened = await open('user-api-keys');
    const { page: p } = opened;
    await p.getByRole('button', { name: 'Create API key' }).first().click();
    await p.getByLabel('Name').fill('My CLI');
    await p.getByRole('dialog').getByRole('button', { name: 'Create API key' }).click();
    await p.getByText('Save your key').waitFor();
    await p.getByRole('button', { name: 'Copy and close' }).click();
    await p.getByRole('cell', { name: 'My CLI' }).waitFor();
    const [stored] = await keysOf(env);
    expect(stored).toMatchObject({ name: 'My CLI', ownerType: 'user', userId: me.userId });
    await screenshot(p, 'user-api-keys');
    await closeClean(opened);
  });

  it('UserProfile changes the e-mail address: a code to the current one, then one to the new, both over SMTP', async () => {
    const env = await newEnvironment();
    const org = await env.http.post('/organizations', { name: 'Profile Corp' });
    const ada = await member(env, org.body.id, 'Ada', 'Lovelace', 'admin');
    mint = async () => sessionToken(env, org.body.id, ada.userId);
    /** The code of the next mail to `to` (mail to others, left by earlier tests, is passed over). */
    const codeMailedTo = async (to: string) => {
      for (;;) {
        const mail = await mailbox.next();
        if (mail.to && !Array.isArray(mail.to) && mail.to.text === to)
          return mail.text?.match(/\b(\d{6})\b/)?.[1] ?? '';
      }
    };
    const opened = await open('user-profile');
    const { page: p } = opened;
    await p.getByText(ada.email).waitFor();
    await p.getByText('Ada Lovelace').waitFor();

    // The e-mail's Edit (the second; the first is the name's) asks to verify the current address.
    await p.getByRole('button', { name: 'Edit' }).nth(1).click();
    const dialog = p.getByRole('dialog');
    await dialog.getByText('Verify your identity').waitFor();
    await dialog.getByRole('button', { name: 'Send verification code' }).click();
    const first = await codeMailedTo(ada.email);
    expect(first).toMatch(/^\d{6}$/);
    await dialog.getByText('A verification code was sent to').waitFor();
    await dialog.locator('input').first().click();
    await p.keyboard.type(first);

    // Elevated: the new address, and a code mailed to it.
    await dialog.getByText('Change email address').waitFor();
    const renamed = uniqueEmail('ada.renamed');
    await dialog.getByLabel('New email address').fill(renamed);
    await dialog.getByRole('button', { name: 'Send verification code' }).click();
    const second = await codeMailedTo(renamed);
    await dialog.getByText('Enter verification code').waitFor();
    await dialog.locator('input').first().click();
    await p.keyboard.type(second);

    // Changed; a user with no password is offered one (under the fresh elevated access).
    await dialog.getByText(`Your email has been successfully updated to ${renamed}`).waitFor();
    await screenshot(p, 'user-profile-email-changed');
    const stored = await env.http.get(`/user_management/users/${ada.userId}`);
    expect(stored.body).toMatchObject({ email: renamed, email_verified: true });
    expect(await storedEventData(env, 'user.updated')).toEqual([expect.objectContaining({ email: renamed })]);
    const [before] = await deps.db.select().from(users).where(eq(users.id, ada.userId));
    expect(before?.passwordHash).toBeNull();
    await dialog.getByLabel('Enter a password').fill('correct horse battery');
    await dialog.getByLabel('Confirm your password').fill('correct horse battery');
    await dialog.getByRole('button', { name: 'Set password' }).click();
    await dialog.waitFor({ state: 'detached' });
    await p.getByText(renamed).waitFor();
    const [after] = await deps.db.select().from(users).where(eq(users.id, ada.userId));
    expect(after?.passwordHash).toMatch(/^\$scrypt\$/);
    await screenshot(p, 'user-profile');
    await closeClean(opened);
  });

  it('UserSecurity changes the password: the wrong current one is marked, the right one changes the stored hash', async () => {
    const env = await newEnvironment();
    const org = await env.http.post('/organizations', { name: 'Security Corp' });
    const email = uniqueEmail('grace');
    const user = await env.http.post('/user_management/users', {
      email,
      first_name: 'Grace',
      last_name: 'Hopper',
      password: 'correct horse battery',
    });
    await env.http.post('/user_management/organization_memberships', {
      user_id: user.body.id,
      organization_id: org.body.id,
    });
    mint = async () => sessionToken(env, org.body.id, user.body.id);
    const [before] = await deps.db.select().from(users).where(eq(users.id, user.body.id));
    const opened = await open('user-security');
    const { page: p } = opened;
    await p.getByText('Password', { exact: true }).waitFor();
    await p.getByRole('button', { name: 'Change' }).click();
    const dialog = p.getByRole('dialog');
    await dialog.getByText('Change your account password').waitFor();
    const fill = async (current: string, next: string) => {
      await dialog.getByLabel('Enter your current password').fill(current);
      await dialog.getByLabel('Enter your new password').fill(next);
      await dialog.getByLabel('Confirm your new password').fill(next);
      await dialog.getByRole('button', { name: 'Change password' }).click();
    };
    await fill('not my password', 'a brand new one');
    await dialog.getByText('Your current password is incorrect. Please, try again.').waitFor();
    const [unchanged] = await deps.db.select().from(users).where(eq(users.id, user.body.id));
    expect(unchanged?.passwordHash).toBe(before?.passwordHash);
    await screenshot(p, 'user-security-wrong-password');

    await fill('correct horse battery', 'a brand new one');
    await dialog.waitFor({ state: 'detached' });
    const [after] = await deps.db.select().from(users).where(eq(users.id, user.body.id));
    expect(after?.passwordHash).toMatch(/^\$scrypt\$/);
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    await screenshot(p, 'user-security');
    await closeClean(opened);
  });

  const FIREFOX_ON_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:132.0) Gecko/20100101 Firefox/132.0';
  const SAFARI_ON_IPHONE =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

  it('UserSessions lists the sessions with their devices, this device first, and signing one out refuses its token', async () => {
    const env = await newEnvironment();
    // The page's token is a session (its sid is "This device"); a widget token is none.
    const me = await clientSetup(env, { kind: 'client' });
    const other = async () => {
      const res = await apiOf(env).post('/client/token', { organization_id: me.organizationId, user_id: me.userId });
      expect(res.status).toBe(201);
      return clientFor(env, res.body.token);
    };
    const laptop = await other();
    const phone = await other();
    const status = (c: Pick<ClientSetup, 'graphql'>) => c.graphql('{ clientApiStatus }').then((r) => r.status);
    // Each session records the device of its first request (docs/users-sessions.md); the widget names it.
    const firstUse = (c: Pick<ClientSetup, 'http'>, agent: string) =>
      c.http.post('/client/graphql', { query: '{ clientApiStatus }' }, { 'User-Agent': agent }).then((r) => r.status);
    expect(await firstUse(laptop, FIREFOX_ON_MAC)).toBe(200);
    expect(await firstUse(phone, SAFARI_ON_IPHONE)).toBe(200);
    mint = async () => me.token;
    // With a GeoIP city database (GEOIP_DATABASE), each session shows its city; loopback is Berlin in this one.
    const geoFile = join(mkdtempSync(join(tmpdir(), 'atrium-geoip-')), 'city.mmdb');
    writeFileSync(geoFile, mmdbOf([['127.0.0.0/8', cityRecord('Berlin', 'DE', 'Germany')]]));
    deps.geo = openGeoLocator(geoFile);

    const opened = await open('user-sessions');
    const { page: p } = opened;
    await p.getByText('This device').waitFor();
    // This page's own session was first used by Chromium itself (headless or Debian's, both on Linux).
    await p.getByText('Chrome on Linux').waitFor();
    await p.getByText('Firefox on macOS').waitFor();
    await p.getByText('Safari on iOS').waitFor();
    expect(await p.getByText(/Last seen/).count()).toBe(2);
    expect(await p.getByText('Berlin, DE').count()).toBe(3);
    const signOuts = p.getByRole('button', { name: 'Sign out', exact: true });
    // Two other sessions, each with its own button, plus "Sign out of all other devices".
    await expect.poll(() => signOuts.count()).toBe(3);
    await screenshot(p, 'user-sessions');
    const stored = await env.http.get(`/user_management/users/${me.userId}/sessions`);
    expect(stored.body.data.filter((s: any) => s.status === 'active')).toHaveLength(3);

    await signOuts.first().click();
    const dialog = p.getByRole('alertdialog');
    // The dialog names the device it signs out of.
    const device = await dialog.locator('strong').innerText();
    expect(['Firefox on macOS', 'Safari on iOS']).toContain(device);
    await dialog.getByRole('button', { name: 'Sign out', exact: true }).click();
    // The dialog closes once the revocation is answered (and shown "Done"), then the list is
    // fetched again without that device: one other session's button and "all other devices" remain.
    // (While the dialog is open the page behind it is hidden from the accessibility tree, so the
    // dialog's own button is the only "Sign out": counting buttons is only meaningful once it closed.)
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => p.getByText(device).count()).toBe(0);
    expect(await signOuts.count()).toBe(2);
    await screenshot(p, 'user-sessions-after');
    // That device's session is revoked and its token refused; the other's and this device's still work.
    const [gone, kept] = device === 'Firefox on macOS' ? [laptop, phone] : [phone, laptop];
    expect(await status(gone)).toBe(403);
    expect(await status(kept)).toBe(200);
    expect(await status(me)).toBe(200);
    const after = (await env.http.get(`/user_management/users/${me.userId}/sessions`)).body.data;
    expect(after.map((s: any) => s.status).sort()).toEqual(['active', 'active', 'revoked']);
    expect(after.find((s: any) => s.id === me.claims.sid)?.status).toBe('active');
    await closeClean(opened);
    deps.geo = undefined;
  });
});

/** The caller's settings the spawned server must not see (it takes process.env): never ATRIUM_*, WORKOS_*, DATABASE_URL. */
const SCRUBBED = /^(ATRIUM_|WORKOS_|DATABASE_URL$|DNS_|SMTP_|GEOIP_|PORT$|HOST$)/;

describe.skipIf(!launched.browser)('the official widgets against the real server (what npm start runs)', () => {
  let server: SpawnedServer;
  let hostPage: WidgetPage;
  let dataDir: string;
  let token = '';
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    hostPage = await serveWidgetPage(async () => token);
    for (const key of Object.keys(process.env))
      if (SCRUBBED.test(key)) {
        saved[key] = process.env[key];
        delete process.env[key];
      }
    dataDir = mkdtempSync(join(tmpdir(), 'atrium-widgets-'));
    server = await spawnServer({ ATRIUM_DATA_DIR: dataDir, ATRIUM_CORS_ORIGINS: hostPage.origin }, await freePort());
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
    await hostPage?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('configured by ATRIUM_CORS_ORIGINS, it serves the switcher and the users table to the page', async () => {
    const apiKey = server.output().match(/export WORKOS_API_KEY=(\S+)/)?.[1];
    expect(apiKey).toBeDefined();
    const http = new HttpClient(server.url, { Authorization: `Bearer ${apiKey}` });
    const org = await http.post('/organizations', { name: 'Initech' });
    const email = uniqueEmail('peter');
    const user = await http.post('/user_management/users', { email, first_name: 'Peter', last_name: 'Gibbons' });
    const membership = await http.post('/user_management/organization_memberships', {
      user_id: user.body.id,
      organization_id: org.body.id,
      role_slug: 'admin',
    });
    expect(membership.status).toBe(201);
    const issued = await http.post('/widgets/token', {
      organization_id: org.body.id,
      user_id: user.body.id,
      scopes: ['widgets:users-table:manage'],
    });
    expect(issued.status).toBe(201);
    token = issued.body.token;

    for (const widget of ['organization-switcher', 'users-management']) {
      const opened = await openPage(launched.browser!, server.url);
      await opened.page.goto(hostPage.url(widget, server.url));
      if (widget === 'organization-switcher') await opened.page.getByRole('button', { name: 'Initech' }).waitFor();
      else await rowOf(opened.page, email).waitFor();
      expect(opened.apiCalls.every((call) => call.status === 200 || call.status === 403)).toBe(true);
      await screenshot(opened.page, `npm-start-${widget}`);
      await closeClean(opened);
    }
  });
});
