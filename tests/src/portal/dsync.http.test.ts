import { createHash } from 'node:crypto';
import { directories, portalSessions } from '@atrium/db';
import {
  addPortalDirectory,
  createCaller,
  createInnerContext,
  DEFAULT_QUOTAS,
  type MailMessage,
  portalSessionOfCookie,
} from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../helpers/client.ts';
import { directoryRow, directoryWithUsers } from '../helpers/directories.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

// The admin portal's dsync intent (issue #36): the customer's IT admin creates the organization's
// directory alone, sees its SCIM base URL and bearer token once, and rotates the token; the page
// reads the directories (state, counts, last sync) and never the token again.

beforeAll(() => getWorld());

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

async function newOrganization(env: TestEnvironment, name = 'Acme') {
  return (await env.http.post('/organizations', { name })).body.id as string;
}

const storedDirectories = (env: TestEnvironment) =>
  env.deps.db.select().from(directories).where(eq(directories.environmentId, env.environmentId));

/** Opens a link as a browser (no redirect followed): the response and its session cookie. */
async function openLink(env: TestEnvironment, link: string) {
  const url = new URL(link);
  expect(url.origin).toBe(new URL(TEST_ISSUER).origin);
  const res = await fetch(`${env.world.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  return { res, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '' };
}

/** A dsync portal session (or `intent`'s) of a new organization: cookie, CSRF token, page, and helpers. */
async function dsyncSession(env: TestEnvironment, organizationId?: string, intent = 'dsync') {
  const organization = organizationId ?? (await newOrganization(env));
  const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: intent as 'dsync' });
  const { res, cookie } = await openLink(env, link);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`/portal/${intent}`);
  const page = await fetch(`${env.world.url}/portal/${intent}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="atrium-portal-csrf" content="([^"]+)"/.exec(html)?.[1] ?? '';
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${env.world.url}${path}`, {
      method: 'POST',
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body,
    });
  const create = (body: unknown, headers: Record<string, string> = { cookie, 'X-CSRF-Token': csrf }) =>
    post('/portal/session/directories', headers, typeof body === 'string' ? body : JSON.stringify(body));
  const rotate = (id: string, headers: Record<string, string> = { cookie, 'X-CSRF-Token': csrf }) =>
    post(`/portal/session/directories/${id}/token`, headers);
  const status = async () =>
    (await fetch(`${env.world.url}/portal/session/status`, { headers: { cookie } })).json() as Promise<any>;
  const token = async () =>
    (await (await post('/portal/session/token', { cookie, 'X-CSRF-Token': csrf })).json()).token as string;
  return { organization, link, cookie, csrf, page, html, create, rotate, status, token };
}

describe('POST /portal/generate_link with intent dsync', () => {
  it('issues a single-use link that opens the directory-sync page of the organization', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env, 'Dsync Corp');
    const session = await dsyncSession(env, organization);
    expect(session.page.status).toBe(200);
    expect(session.page.headers.get('cache-control')).toBe('no-store');
    expect(session.page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(session.html).toContain('<title>Dsync Corp · Directory sync</title>');
    expect(session.html).toContain('<meta name="atrium-portal-intent" content="dsync" />');
    expect(session.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // Used: a second open is refused with the readable page, and no second session.
    const reused = await openLink(env, session.link);
    expect(reused.res.status).toBe(410);
    expect(reused.cookie).toBe('');
    // Expired: a link made six minutes ago.
    const past = { ...env.deps, now: () => new Date(Date.now() - 6 * 60_000) };
    const old = await createCaller(createInnerContext(past, `Bearer ${env.apiKey}`)).portal.generateLink({
      organization,
      intent: 'dsync',
    });
    const expired = await openLink(env, old.link);
    expect(expired.res.status).toBe(410);
    expect(await expired.res.text()).toContain('This link has expired');
    const sessions = await env.deps.db
      .select()
      .from(portalSessions)
      .where(eq(portalSessions.environmentId, env.environmentId));
    expect(sessions.map((s) => s.intent)).toEqual(['dsync']);
    // The dsync session opens its own page only.
    expect((await fetch(`${env.world.url}/portal/sso`, { headers: { cookie: session.cookie } })).status).toBe(401);
  });

  it('mails the link with what it is for', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env, 'Mail Corp');
    const sent: MailMessage[] = [];
    const deps = { ...env.deps, mailer: { send: async (m: MailMessage) => void sent.push(m) } };
    const caller = createCaller(createInnerContext(deps, `Bearer ${env.apiKey}`));
    const { link } = await caller.portal.generateLink({
      organization,
      intent: 'dsync',
      admin_emails: ['it@mail.example'],
    });
    expect(sent[0]?.text).toContain('Use this link to set up directory sync for Mail Corp.');
    expect(sent[0]?.text).toContain(link);
  });
});

describe('the dsync page: create, show the token once, rotate', () => {
  it('creates a directory of the session organization and shows its SCIM base URL and token in that answer only', async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const res = await s.create({ type: 'okta scim v2.0', name: '  Okta employees ' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const created = await res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^directory_[0-9A-HJKMNP-TV-Z]{26}$/),
      name: 'Okta employees',
      type: 'okta scim v2.0',
      state: 'unlinked',
      scim_base_url: `${TEST_ISSUER}/scim/v2/${created.id}`,
      bearer_token: expect.stringMatching(/^scim_[0-9A-Za-z]{40}$/),
    });
    const [row] = await storedDirectories(env);
    expect(row).toMatchObject({
      id: created.id,
      organizationId: s.organization,
      tokenHash: sha256(created.bearer_token),
    });
    expect(JSON.stringify(row)).not.toContain(created.bearer_token);

    // Afterwards: the status shows the directory (state, counts, last sync, base URL), never the token.
    const status = await s.status();
    expect(status.directories).toEqual([
      {
        id: created.id,
        name: 'Okta employees',
        type: 'okta scim v2.0',
        state: 'unlinked',
        users: { active: 0, inactive: 0 },
        groups: 0,
        lastSyncAt: null,
        scimBaseUrl: created.scim_base_url,
      },
    ]);
    expect(JSON.stringify(status)).not.toContain(created.bearer_token);
    const page = await (await fetch(`${env.world.url}/portal/dsync`, { headers: { cookie: s.cookie } })).text();
    expect(page).not.toContain(created.bearer_token);
    // The widget's read of it, with the portal token: no token either.
    const widget = clientFor(env, await s.token());
    const listed = await widget.http.get('/_widgets/directory-sync/directories');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(created.bearer_token);
  });

  it('the three providers are accepted; anything else, a bad name or bad JSON is refused and stores nothing', async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const refused: [unknown, number, string][] = [
      [{ type: 'bamboohr', name: 'HR' }, 422, 'invalid_directory_type'],
      [{ type: 'Okta', name: 'HR' }, 422, 'invalid_directory_type'],
      [{ name: 'HR' }, 422, 'invalid_directory_type'],
      [{ type: ['okta scim v2.0'], name: 'HR' }, 422, 'invalid_directory_type'],
      [{ type: 'okta scim v2.0' }, 422, 'invalid_request_parameters'],
      [{ type: 'okta scim v2.0', name: '   ' }, 422, 'invalid_request_parameters'],
      [{ type: 'okta scim v2.0', name: 'x'.repeat(257) }, 422, 'invalid_request_parameters'],
      [{ type: 'okta scim v2.0', name: 42 }, 422, 'invalid_request_parameters'],
      ['{"type":', 400, 'invalid_json'],
      [JSON.stringify({ type: 'okta scim v2.0', name: 'x'.repeat(5_000) }), 413, 'payload_too_large'],
    ];
    for (const [body, status, code] of refused) {
      const res = await s.create(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(await res.json()).toMatchObject({ code });
    }
    expect(await storedDirectories(env)).toEqual([]);
    for (const type of ['okta scim v2.0', 'azure scim v2.0', 'generic scim v2.0']) {
      expect((await s.create({ type, name: type })).status).toBe(201);
    }
    expect((await storedDirectories(env)).map((d) => d.type).sort()).toEqual([
      'azure scim v2.0',
      'generic scim v2.0',
      'okta scim v2.0',
    ]);
  });

  it('needs the cookie and the CSRF token; another intent may not create; nothing stored', async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const body = { type: 'okta scim v2.0', name: 'Okta' };
    const [id, secret] = s.cookie.replace('atrium_portal=', '').split('.');
    const refusals: Record<string, string>[] = [
      {},
      { cookie: s.cookie },
      { 'X-CSRF-Token': s.csrf },
      { cookie: s.cookie, 'X-CSRF-Token': `${s.csrf.slice(0, -2)}xx` },
      { cookie: `atrium_portal=${id}.${secret?.slice(0, -3)}abc`, 'X-CSRF-Token': s.csrf },
    ];
    for (const headers of refusals) {
      const res = await s.create(body, headers);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'forbidden' });
    }
    // A domain_verification session of the same organization: 403.
    const domains = await dsyncSession(env, s.organization, 'domain_verification');
    expect((await domains.create(body)).status).toBe(403);
    expect(await storedDirectories(env)).toEqual([]);
    // An ended session (31 minutes later): refused too.
    const sessionRow = (
      await env.deps.db.select().from(portalSessions).where(eq(portalSessions.environmentId, env.environmentId))
    ).find((r) => r.intent === 'dsync');
    await env.deps.db
      .update(portalSessions)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(portalSessions.id, sessionRow?.id ?? ''));
    expect((await s.create(body)).status).toBe(403);
    expect((await fetch(`${env.world.url}/portal/dsync`, { headers: { cookie: s.cookie } })).status).toBe(401);
    expect(await storedDirectories(env)).toEqual([]);
  });

  it("rotates its own organization's token (shown once again; the old one is gone); another organization's directory is 404", async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const created = await (await s.create({ type: 'azure scim v2.0', name: 'Entra' })).json();
    const theirs = await directoryWithUsers(env, await newOrganization(env, 'Other'), { active: 1 });
    const theirHash = (await directoryRow(env, theirs.directory.id)).tokenHash;

    // Without the CSRF token: 403, unchanged.
    expect((await s.rotate(created.id, { cookie: s.cookie })).status).toBe(403);
    expect((await directoryRow(env, created.id)).tokenHash).toBe(sha256(created.bearer_token));

    const res = await s.rotate(created.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const rotated = await res.json();
    expect(rotated).toMatchObject({ id: created.id, scim_base_url: created.scim_base_url });
    expect(rotated.bearer_token).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    expect(rotated.bearer_token).not.toBe(created.bearer_token);
    expect((await directoryRow(env, created.id)).tokenHash).toBe(sha256(rotated.bearer_token));

    for (const id of [theirs.directory.id, 'directory_01HE8GSH8FQPASKSY27THRKRBP', 'nonsense']) {
      const refused = await s.rotate(id);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ code: 'entity_not_found' });
    }
    expect((await directoryRow(env, theirs.directory.id)).tokenHash).toBe(theirHash);
    // The status lists this organization's directory only.
    expect((await s.status()).directories.map((d: { id: string }) => d.id)).toEqual([created.id]);
  });

  it('the status shows state, counts and last sync once the identity provider has written', async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const { directory } = await directoryWithUsers(env, s.organization, { active: 2, inactive: 1, groups: 1 });
    const [shown] = (await s.status()).directories;
    expect(shown).toMatchObject({
      id: directory.id,
      state: 'linked',
      users: { active: 2, inactive: 1 },
      groups: 1,
      lastSyncAt: expect.stringMatching(/Z$/),
    });
  });

  it("the portal token reads its organization's directories in the widget; its link is the page itself", async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const token = await s.token();
    expect(decodeJwt(token).permissions).toEqual(['widgets:dsync:manage']);
    const mine = await directoryWithUsers(env, s.organization, { active: 1 });
    const theirs = await directoryWithUsers(env, await newOrganization(env, 'Other'), { active: 1 });
    const widget = clientFor(env, token);
    const list = await widget.http.get('/_widgets/directory-sync/directories');
    expect(list.body).toMatchObject({ link: `${TEST_ISSUER}/portal/dsync` });
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([mine.directory.id]);
    expect((await widget.http.get(`/_widgets/directory-sync/directories/${theirs.directory.id}`)).status).toBe(404);
    // Nothing else: the domains widget, and a link of another intent, are 403.
    expect((await widget.http.get('/_widgets/admin-portal/organization-domains')).status).toBe(403);
    expect((await widget.http.post('/_widgets/admin-portal/generate-link?intent=sso')).status).toBe(403);
  });
  it('an organization holds at most directoriesPerOrganization directories (422 quota_exceeded, nothing stored)', async () => {
    const env = await newEnvironment();
    const s = await dsyncSession(env);
    const deps = {
      ...env.deps,
      config: { ...env.deps.config, quotas: { ...DEFAULT_QUOTAS, directoriesPerOrganization: 2 } },
    };
    const live = await portalSessionOfCookie(deps, s.cookie.replace('atrium_portal=', ''));
    if (!live) throw new Error('no live session');
    await addPortalDirectory(deps, live, { type: 'okta scim v2.0', name: 'One' });
    await addPortalDirectory(deps, live, { type: 'okta scim v2.0', name: 'Two' });
    await expect(addPortalDirectory(deps, live, { type: 'okta scim v2.0', name: 'Three' })).rejects.toMatchObject({
      status: 422,
      apiCode: 'quota_exceeded',
    });
    expect((await storedDirectories(env)).map((d) => d.name).sort()).toEqual(['One', 'Two']);
    // The default (10) through the page's route.
    for (let i = 0; i < 8; i += 1)
      expect((await s.create({ type: 'generic scim v2.0', name: `D${i}` })).status).toBe(201);
    const over = await s.create({ type: 'generic scim v2.0', name: 'Eleventh' });
    expect(over.status).toBe(422);
    expect(await over.json()).toMatchObject({ code: 'quota_exceeded' });
    expect(await storedDirectories(env)).toHaveLength(10);
  });
});
