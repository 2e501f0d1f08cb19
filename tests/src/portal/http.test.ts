import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { organizationDomains, portalLinks, portalSessions } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import {
  type AppRouter,
  createCaller,
  createInnerContext,
  type MailMessage,
  portalSessionOfCookie,
} from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { clientFor, clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

// The self-serve admin portal (issue #23): links from the SDK, their exchange for a portal
// session cookie, the pages, the CSRF-protected portal token, and what that token may reach.

async function stored(env: TestEnvironment) {
  const links = await env.deps.db.select().from(portalLinks).where(eq(portalLinks.environmentId, env.environmentId));
  const sessions = await env.deps.db
    .select()
    .from(portalSessions)
    .where(eq(portalSessions.environmentId, env.environmentId));
  return { links, sessions };
}

async function newOrganization(env: TestEnvironment, name = 'Acme') {
  return (await env.http.post('/organizations', { name })).body.id as string;
}

/** The link's path on the worker's server (links name the configured issuer, not the test port). */
function onServer(env: TestEnvironment, link: string): string {
  const url = new URL(link);
  expect(url.origin).toBe(new URL(TEST_ISSUER).origin);
  return `${env.world.url}${url.pathname}${url.search}`;
}

/** Opens a link as a browser would (no redirect followed); the response and the cookie it set. */
async function openLink(env: TestEnvironment, link: string, method: 'GET' | 'POST' = 'GET') {
  let res: Response;
  if (method === 'GET') res = await fetch(onServer(env, link), { redirect: 'manual' });
  else {
    // The official widgets: the `apiToken` query parameter becomes a hidden form field.
    const url = new URL(onServer(env, link));
    const apiToken = url.searchParams.get('apiToken') ?? '';
    url.searchParams.delete('apiToken');
    res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ apiToken }).toString(),
    });
  }
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  return { res, setCookie, cookie };
}

/** A portal session of `intent` for a new organization: its cookie, CSRF token and page. */
async function portalSession(env: TestEnvironment, intent = 'domain_verification', organizationId?: string) {
  const organization = organizationId ?? (await newOrganization(env));
  const { link } = await sdkFor(env).adminPortal.generateLink({
    organization,
    intent: intent as 'sso',
    returnUrl: 'https://app.example.com/settings',
    successUrl: 'https://app.example.com/done',
  });
  const { cookie } = await openLink(env, link);
  const page = await fetch(`${env.world.url}/portal/${intent}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="atrium-portal-csrf" content="([^"]+)"/.exec(html)?.[1] ?? '';
  const tokenOf = async () => {
    const res = await fetch(`${env.world.url}/portal/session/token`, {
      method: 'POST',
      headers: { cookie, 'X-CSRF-Token': csrf },
    });
    return (await res.json()).token as string;
  };
  return { organization, link, cookie, csrf, page, html, tokenOf };
}

describe('POST /portal/generate_link', () => {
  it('the SDK gets a single-use link to this server, stored only as a hash, valid 5 minutes', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const before = Date.now();
    const { link } = await sdkFor(env).adminPortal.generateLink({
      organization,
      intent: 'domain_verification',
      returnUrl: 'https://app.example.com/settings',
      successUrl: 'https://app.example.com/done',
    });
    expect(link).toMatch(new RegExp(`^${TEST_ISSUER}/portal/launch\\?apiToken=[0-9A-Za-z]{43}$`));
    const secret = new URL(link).searchParams.get('apiToken') ?? '';
    const { links } = await stored(env);
    expect(links).toHaveLength(1);
    const [row] = links;
    expect(row).toMatchObject({
      organizationId: organization,
      intent: 'domain_verification',
      returnUrl: 'https://app.example.com/settings',
      successUrl: 'https://app.example.com/done',
      usedAt: null,
    });
    expect(JSON.stringify(row)).not.toContain(secret);
    const ttl = (row?.expiresAt.getTime() ?? 0) - before;
    expect(ttl).toBeGreaterThan(4.9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(5 * 60_000 + 2_000);
  });

  it.each([
    ['bring_your_own_key', 'intent_not_supported', /'bring_your_own_key' is not available in Atrium yet/],
    ['certificate_renewal', 'intent_not_supported', /not available/],
    ['nonsense', 'invalid_intent', /intent must be one of: domain_verification, sso/],
    [undefined, 'invalid_intent', /intent must be one of/],
  ])('intent %s answers 422 %s and stores nothing', async (intent, code, message) => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const res = await env.http.post('/portal/generate_link', { organization, intent });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code, message: expect.stringMatching(message) });
    expect((await stored(env)).links).toHaveLength(0);
  });

  it.each([
    ['success_url', 'javascript:alert(1)'],
    ['success_url', '/relative/path'],
    ['return_url', 'ftp://files.example.com/'],
    ['return_url', 'https://user:pass@example.com/'],
    ['success_url', 'not a url'],
  ])('%s %s answers 422 and stores nothing', async (field, value) => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const res = await env.http.post('/portal/generate_link', {
      organization,
      intent: 'domain_verification',
      [field]: value,
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect((await stored(env)).links).toHaveLength(0);
  });

  it("answers 404 for an unknown organization and another environment's", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreign = await newOrganization(other);
    for (const organization of ['org_01HE8GSH8FQPASKSY27THRKRBP', foreign]) {
      const res = await env.http.post('/portal/generate_link', { organization, intent: 'sso' });
      expect(res.status).toBe(404);
    }
    expect((await stored(env)).links).toHaveLength(0);
  });

  it('mails the link to each admin e-mail when a mailer is configured', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env, 'Mailed Corp');
    const sent: MailMessage[] = [];
    const deps = { ...env.deps, mailer: { send: async (m: MailMessage) => void sent.push(m) } };
    const caller = createCaller(createInnerContext(deps, `Bearer ${env.apiKey}`));
    const { link } = await caller.portal.generateLink({
      organization,
      intent: 'domain_verification',
      admin_emails: ['it@mailed.example', 'ops@mailed.example'],
    });
    expect(sent.map((m) => m.to)).toEqual(['it@mailed.example', 'ops@mailed.example']);
    expect(sent[0]?.subject).toBe('Admin portal for Mailed Corp');
    expect(sent[0]?.text).toContain(link);
    expect(sent[0]?.html).toContain(link.replace(/&/g, '&amp;'));
    const bad = await env.http.post('/portal/generate_link', { organization, intent: 'sso', admin_emails: ['nope'] });
    expect(bad.status).toBe(422);
  });
});

describe('opening a portal link', () => {
  it('exchanges the link for an HttpOnly SameSite cookie on /portal and redirects to the intent page', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: 'domain_verification' });
    const { res, setCookie, cookie } = await openLink(env, link);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/portal/domain_verification');
    expect(setCookie).toMatch(/^atrium_portal=portal_session_[0-9A-Z]{26}\.[0-9A-Za-z]+;/);
    expect(setCookie).toContain('Path=/portal');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Max-Age=1800');
    expect(setCookie).not.toContain('Secure'); // the base URL is http here
    const { links, sessions } = await stored(env);
    expect(links[0]?.usedAt).toBeInstanceOf(Date);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ organizationId: organization, intent: 'domain_verification' });
    expect(cookie).not.toContain(sessions[0]?.secretHash);
  });

  it('marks the cookie Secure when the base URL is https', async () => {
    const env = await newEnvironment();
    const deps = { ...env.deps, tokens: { ...env.deps.tokens, issuer: 'https://portal.example.com' } };
    const server = createServer(createApp(deps, { baseUrl: 'https://portal.example.com' }).handler);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const caller = createCaller(createInnerContext(deps, `Bearer ${env.apiKey}`));
      const { link } = await caller.portal.generateLink({ organization: await newOrganization(env), intent: 'sso' });
      expect(link.startsWith('https://portal.example.com/portal/launch?apiToken=')).toBe(true);
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}${new URL(link).pathname}${new URL(link).search}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('set-cookie')?.split('; ')).toContain('Secure');
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('accepts the form POST the official widgets send', async () => {
    const env = await newEnvironment();
    const { link } = await sdkFor(env).adminPortal.generateLink({
      organization: await newOrganization(env),
      intent: 'sso',
    });
    const { res, cookie } = await openLink(env, link, 'POST');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/portal/sso');
    const page = await fetch(`${env.world.url}/portal/sso`, { headers: { cookie } });
    expect(page.status).toBe(200);
  });

  it('a reused link, an expired link and an unknown link get a readable page', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: 'domain_verification' });
    expect((await openLink(env, link)).res.status).toBe(303);
    const reused = await openLink(env, link);
    expect(reused.res.status).toBe(410);
    expect(reused.res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(reused.setCookie).toBe('');
    expect(await reused.res.text()).toContain('This link has already been used');

    // A link made six minutes ago has expired.
    const past = { ...env.deps, now: () => new Date(Date.now() - 6 * 60_000) };
    const old = await createCaller(createInnerContext(past, `Bearer ${env.apiKey}`)).portal.generateLink({
      organization,
      intent: 'domain_verification',
    });
    const expired = await openLink(env, old.link);
    expect(expired.res.status).toBe(410);
    expect(await expired.res.text()).toContain('This link has expired');

    const unknown = await fetch(`${env.world.url}/portal/launch?apiToken=${'x'.repeat(43)}`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('This link is not valid');
    expect((await stored(env)).sessions).toHaveLength(1);
  });

  it('serves the page with a strict CSP, no inline script, no caching, and the return URL as its back link', async () => {
    const env = await newEnvironment();
    const { page, html } = await portalSession(env);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval)/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(html).toContain('<a class="portal-back" href="https://app.example.com/settings">');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // The session is for one intent: the other page is refused.
    const other = await fetch(`${env.world.url}/portal/sso`, {
      headers: { cookie: (await portalSession(env)).cookie },
    });
    expect(other.status).toBe(401);
    const none = await fetch(`${env.world.url}/portal/domain_verification`);
    expect(none.status).toBe(401);
    expect(await none.text()).toContain('Your admin portal session has ended');
  });
});

describe('the portal session token (cookie-authenticated write)', () => {
  it('needs the cookie and the CSRF token: missing, forged or wrong ones are 403', async () => {
    const env = await newEnvironment();
    const { cookie, csrf, organization } = await portalSession(env);
    const post = (headers: Record<string, string>) =>
      fetch(`${env.world.url}/portal/session/token`, { method: 'POST', headers });
    const [id, secret] = cookie.replace('atrium_portal=', '').split('.');
    const refusals: Record<string, string>[] = [
      {},
      { 'X-CSRF-Token': csrf },
      { cookie },
      { cookie, 'X-CSRF-Token': `${csrf.slice(0, -2)}xx` },
      { cookie: `atrium_portal=${id}.${secret?.slice(0, -3)}abc`, 'X-CSRF-Token': csrf },
      { cookie: `atrium_portal=portal_session_01HE8GSH8FQPASKSY27THRKRBP.${secret}`, 'X-CSRF-Token': csrf },
    ];
    for (const headers of refusals) {
      const res = await post(headers);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ message: expect.any(String) });
    }
    const ok = await post({ cookie, 'X-CSRF-Token': csrf });
    expect(ok.status).toBe(200);
    const { token } = await ok.json();
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ org_id: organization, permissions: ['widgets:domain-verification:manage'] });
    expect(claims.sid).toMatch(/^portal_session_/);
    expect(token.split('.')[1]).toMatch(/^[A-Za-z0-9+/=]+$/); // the widgets decode it with atob
  });

  it('adds a domain with the cookie and CSRF token, starting its verification; refusals store nothing', async () => {
    const env = await newEnvironment();
    const { cookie, csrf, organization } = await portalSession(env);
    const add = (headers: Record<string, string>, body: string) =>
      fetch(`${env.world.url}/portal/session/domains`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
      });
    const name = uniqueDomain('added');
    const body = JSON.stringify({ domain: name });
    const refusals: Record<string, string>[] = [
      {},
      { cookie },
      { cookie, 'X-CSRF-Token': 'forged' },
      { 'X-CSRF-Token': csrf },
    ];
    for (const headers of refusals) {
      expect((await add(headers, body)).status).toBe(403);
    }
    const bad = await add({ cookie, 'X-CSRF-Token': csrf }, JSON.stringify({ domain: 'gmail.com' }));
    expect(bad.status).toBe(422);
    expect((await add({ cookie, 'X-CSRF-Token': csrf }, '{"domain":')).status).toBe(400);
    expect((await add({ cookie, 'X-CSRF-Token': csrf }, '{}')).status).toBe(422);
    expect((await env.http.get(`/organizations/${organization}`)).body.domains).toEqual([]);

    const ok = await add({ cookie, 'X-CSRF-Token': csrf }, body);
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ domain: name, state: 'pending' });
    const [stored] = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.organizationId, organization));
    expect(stored).toMatchObject({ domain: name, state: 'pending' });
    expect(stored?.nextCheckAt).toBeInstanceOf(Date); // verification started: the worker checks it
    // An SSO session may not add domains.
    const sso = await portalSession(env, 'sso');
    expect(
      (await add({ cookie: sso.cookie, 'X-CSRF-Token': sso.csrf }, JSON.stringify({ domain: uniqueDomain() }))).status,
    ).toBe(403);
  });

  it('the portal token reaches its intent on the client surfaces, and no user operation', async () => {
    const env = await newEnvironment();
    const { tokenOf } = await portalSession(env);
    const portal = clientFor(env, await tokenOf());
    expect((await portal.http.get('/_widgets/admin-portal/organization-domains')).status).toBe(200);
    // Another intent's page, a user operation: 403.
    expect((await portal.http.post('/_widgets/admin-portal/generate-link?intent=sso')).status).toBe(403);
    expect((await portal.http.get('/_widgets/UserManagement/organizations')).status).toBe(403);
    const gql = await portal.graphql('mutation { createAdminPortalLink(intent: Sso) { link } }');
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it("a widget inside the portal that asks for a link gets the session's own page: no new link, no new session", async () => {
    const env = await newEnvironment();
    const { tokenOf, cookie } = await portalSession(env);
    const before = await stored(env);
    const portal = clientFor(env, await tokenOf());
    const made = await portal.http.post('/_widgets/admin-portal/generate-link?intent=domain_verification');
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ link: `${TEST_ISSUER}/portal/domain_verification` });
    const gql = await portal.graphql(
      'mutation { createAdminPortalLink(intent: DomainVerification) { link intent expiresAt } }',
    );
    expect(gql.body.data.createAdminPortalLink).toEqual({
      link: `${TEST_ISSUER}/portal/domain_verification`,
      intent: 'DomainVerification',
      expiresAt: before.sessions[0]?.expiresAt.toISOString(),
    });
    // The widget opens it by form POST in a new tab: the same session's page, no cookie set.
    const opened = await openLink(env, made.body.link, 'POST');
    expect(opened.res.status).toBe(303);
    expect(opened.res.headers.get('location')).toBe('/portal/domain_verification');
    expect(opened.setCookie).toBe('');
    const page = await fetch(`${env.world.url}/portal/domain_verification`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('href="https://app.example.com/settings"');
    // Nothing minted: the one link (used) and the one session.
    const after = await stored(env);
    expect(after.links.map((l) => l.id)).toEqual(before.links.map((l) => l.id));
    expect(after.sessions.map((s) => s.id)).toEqual(before.sessions.map((s) => s.id));
  });

  it('ends with the organization: page, token and status are refused once it is deleted', async () => {
    const env = await newEnvironment();
    const { tokenOf, cookie, csrf, organization } = await portalSession(env);
    const portal = clientFor(env, await tokenOf());
    expect((await env.http.delete(`/organizations/${organization}`)).status).toBe(204);
    expect((await stored(env)).sessions).toHaveLength(0);
    expect((await fetch(`${env.world.url}/portal/domain_verification`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${env.world.url}/portal/session/status`, { headers: { cookie } })).status).toBe(403);
    const token = await fetch(`${env.world.url}/portal/session/token`, {
      method: 'POST',
      headers: { cookie, 'X-CSRF-Token': csrf },
    });
    expect(token.status).toBe(403);
    expect((await portal.http.post('/_widgets/admin-portal/generate-link?intent=domain_verification')).status).toBe(
      403,
    );
  });

  it("organization A's portal sees A's domains only, never B's", async () => {
    const env = await newEnvironment();
    const a = await newOrganization(env, 'A Corp');
    const b = await newOrganization(env, 'B Corp');
    const domainA = uniqueDomain('a');
    const domainB = uniqueDomain('b');
    await env.http.post('/organization_domains', { organization_id: a, domain: domainA });
    const created = await env.http.post('/organization_domains', { organization_id: b, domain: domainB });
    const { cookie, tokenOf } = await portalSession(env, 'domain_verification', a);
    const status = await (await fetch(`${env.world.url}/portal/session/status`, { headers: { cookie } })).json();
    expect(status.domains.map((d: { domain: string }) => d.domain)).toEqual([domainA]);
    expect(status.domains[0].record.value).toMatch(/^verification_token=/);
    const portal = clientFor(env, await tokenOf());
    // The widget's domain list (rows 15-17), once present, is A's only; B's domain is 404.
    const list = await portal.http.get('/_widgets/admin-portal/organization-domains');
    if (list.status === 200) {
      expect(list.body.data.map((d: { domain: string }) => d.domain)).toEqual([domainA]);
      const reverify = await portal.http.post(
        `/_widgets/admin-portal/organization-domains/${created.body.id}/reverify`,
      );
      expect(reverify.status).toBe(404);
    } else expect(list.status).toBe(404);
    expect(JSON.stringify(list.body)).not.toContain(domainB);
  });
});

describe('portal sessions: expiry and SSO isolation', () => {
  it('a session is refused once its 30 minutes are over', async () => {
    const env = await newEnvironment();
    const { cookie } = await portalSession(env);
    const value = cookie.replace('atrium_portal=', '');
    expect(await portalSessionOfCookie(env.deps, value)).toBeDefined();
    const later = { ...env.deps, now: () => new Date(Date.now() + 31 * 60_000) };
    expect(await portalSessionOfCookie(later, value)).toBeUndefined();
  });

  it("an SSO portal of organization A lists A's connections only", async () => {
    const env = await newEnvironment();
    const a = await newOrganization(env, 'A Corp');
    const b = await newOrganization(env, 'B Corp');
    const admin = await adminCaller();
    const connection = (organization_id: string, name: string) =>
      admin.connections.create({ environment: env.environmentId, organization_id, connection_type: 'OktaSAML', name });
    const mine = await connection(a, 'A Okta');
    const theirs = await connection(b, 'B Okta');
    const { tokenOf } = await portalSession(env, 'sso', a);
    const portal = clientFor(env, await tokenOf());
    const list = await portal.http.get('/_widgets/admin-portal/sso-connections');
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([mine.id]);
    expect(JSON.stringify(list.body)).not.toContain(theirs.id);
    // The domain widget's routes need the other scope.
    expect((await portal.http.get('/_widgets/admin-portal/organization-domains')).status).toBe(403);
  });

  it('the SSO page is read-only: its token reads the connection, and cannot rename, delete or create one', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const admin = await adminCaller();
    const live = await admin.connections.create({
      environment: env.environmentId,
      organization_id: organization,
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'active',
    });
    const { tokenOf } = await portalSession(env, 'sso', organization);
    const token = await tokenOf();
    expect(decodeJwt(token).permissions).toEqual(['portal:sso:read']);
    const portal = clientFor(env, token);
    // What the page does: the widget lists the connection, and "Manage" asks for a link (its own page).
    const list = await portal.http.get('/_widgets/admin-portal/sso-connections');
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([live.id]);
    const manage = await portal.http.post('/_widgets/admin-portal/generate-link?intent=sso');
    expect(manage.status).toBe(201);
    expect(manage.body.link).toBe(`${TEST_ISSUER}/portal/sso`);
    const read = await portal.graphql('query($id: ID!) { ssoConnection(id: $id) { id name } }', { id: live.id });
    expect(read.body.data.ssoConnection).toEqual({ id: live.id, name: 'Okta' });

    // Nothing more: each write is FORBIDDEN on GraphQL and 403 on typed tRPC.
    const writes = [
      ['mutation($id: ID!) { updateSsoConnection(input: {id: $id, name: "Pwned"}) { id } }', { id: live.id }],
      ['mutation($id: ID!) { deleteSsoConnection(id: $id) }', { id: live.id }],
      ['mutation { createSsoConnection(input: {type: GenericSAML, name: "Rogue"}) { id } }', undefined],
    ] as const;
    for (const [query, variables] of writes) {
      const refused = await portal.graphql(query, variables);
      expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN');
    }
    const trpc = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${env.world.url}/trpc`, headers: { Authorization: `Bearer ${token}` } })],
    });
    await expect(trpc.client.sso.delete.mutate({ id: live.id })).rejects.toMatchObject({
      data: { httpStatus: 403 },
    });
    await expect(trpc.client.sso.update.mutate({ id: live.id, name: 'Pwned' })).rejects.toMatchObject({
      data: { httpStatus: 403 },
    });
    // The live connection is untouched, and none was added.
    const after = await env.http.get(`/connections?organization_id=${organization}`);
    expect(after.body.data.map((c: { id: string; name: string; state: string }) => [c.id, c.name, c.state])).toEqual([
      [live.id, 'Okta', 'active'],
    ]);
  });
});

describe('portal links from the client surfaces', () => {
  it('widgets REST, GraphQL and typed tRPC give a link for the caller organization with the scope', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:domain-verification:manage'] });
    const rest = await a.http.post('/_widgets/admin-portal/generate-link?intent=domain_verification');
    expect(rest.status).toBe(201);
    expect(rest.body).toEqual({ link: expect.stringMatching(/\/portal\/launch\?apiToken=/) });

    const gql = await a.graphql(
      'mutation { createAdminPortalLink(intent: DomainVerification) { link intent expiresAt } }',
    );
    expect(gql.body.data.createAdminPortalLink).toMatchObject({
      intent: 'DomainVerification',
      link: expect.stringContaining('/portal/launch?apiToken='),
    });
    const trpc = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${env.world.url}/trpc`, headers: { Authorization: `Bearer ${a.token}` } })],
    });
    const typed = await trpc.client.adminPortal.createLink.mutate({ intent: 'DomainVerification' });
    expect(typed.intent).toBe('DomainVerification');
    const { links } = await stored(env);
    expect(links).toHaveLength(3);
    expect(links.every((l) => l.organizationId === a.organizationId)).toBe(true);

    // Without the scope: 403 / FORBIDDEN, nothing stored (log_streams needs widgets:audit-log-streaming:manage).
    expect((await a.http.post('/_widgets/admin-portal/generate-link?intent=sso')).status).toBe(403);
    const denied = await a.graphql('mutation { createAdminPortalLink(intent: Sso) { link } }');
    expect(denied.body.errors[0].extensions.code).toBe('FORBIDDEN');
    await expect(trpc.client.adminPortal.createLink.mutate({ intent: 'Sso' })).rejects.toThrow();
    const streams = await a.http.post('/_widgets/admin-portal/generate-link?intent=log_streams');
    expect(streams.status).toBe(403);
    expect(streams.body.message).toMatch(/widgets:audit-log-streaming:manage/);
    expect((await stored(env)).links).toHaveLength(3);
    // No token: 403.
    const none = await fetch(`${env.world.url}/_widgets/admin-portal/generate-link?intent=sso`, {
      method: 'POST',
      headers: WIDGET_HEADERS,
    });
    expect(none.status).toBe(403);
  });
});
