import { auditLogExports, portalLinks } from '@atrium/db';
import {
  type AppRouter,
  buildNextAuditLogExport,
  createCaller,
  createInnerContext,
  EXPORT_CSV_COLUMNS,
  type MailMessage,
} from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { parse } from 'csv-parse/sync';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

// The admin portal's audit_logs intent (issue #38): the organization's IT admin reads its audit log
// events (newest first, filtered by action, actor and date range, paged) and exports the filtered
// events as CSV through the exports service, then downloads it by the export's signed link.

beforeAll(() => getWorld());

const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function newOrganization(env: TestEnvironment, name = 'Acme') {
  return (await env.http.post('/organizations', { name })).body.id as string;
}

const storedExports = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogExports).where(eq(auditLogExports.environmentId, env.environmentId));

interface EventSpec {
  action?: string;
  actorId?: string;
  actorName?: string;
  at: string;
}

/** Records an event through the API (one at a time, so ids follow the order of the calls). */
async function record(env: TestEnvironment, organization: string, spec: EventSpec): Promise<void> {
  const res = await env.http.post('/audit_logs/events', {
    organization_id: organization,
    event: {
      action: spec.action ?? 'user.signed_in',
      occurred_at: spec.at,
      actor: { id: spec.actorId ?? 'user_1', type: 'user', name: spec.actorName ?? 'Jon Smith' },
      targets: [{ id: 'team_1', type: 'team', name: 'Team A' }],
      context: { location: '203.0.113.7', user_agent: 'Chrome/104' },
    },
  });
  expect(res.status).toBe(200);
}

/** Five events, oldest first: two actions, three actors, occurred 50 to 10 minutes ago. */
const EVENTS: EventSpec[] = [
  { action: 'user.signed_in', actorId: 'user_1', actorName: 'Jon Smith', at: ago(50 * MINUTE) },
  { action: 'document.deleted', actorId: 'user_2', actorName: 'Ann Lee', at: ago(40 * MINUTE) },
  { action: 'user.signed_in', actorId: 'user_2', actorName: 'Ann Lee', at: ago(30 * MINUTE) },
  { action: 'document.deleted', actorId: 'user_3', actorName: 'Bo Chen', at: ago(20 * MINUTE) },
  { action: 'user.signed_in', actorId: 'user_1', actorName: 'Jon Smith', at: ago(10 * MINUTE) },
];

async function openLink(env: TestEnvironment, link: string) {
  const url = new URL(link);
  expect(url.origin).toBe(new URL(TEST_ISSUER).origin);
  const res = await fetch(`${env.world.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  return { res, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '' };
}

/** A portal session of `intent` (audit_logs by default) for an organization: cookie, CSRF token and calls. */
async function portalSession(env: TestEnvironment, organization: string, intent = 'audit_logs') {
  const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: intent as 'sso' });
  const { res, cookie } = await openLink(env, link);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`/portal/${intent}`);
  const page = await fetch(`${env.world.url}/portal/${intent}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="atrium-portal-csrf" content="([^"]+)"/.exec(html)?.[1] ?? '';
  const auth = { cookie, 'X-CSRF-Token': csrf };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth) => {
    const r = await fetch(`${env.world.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : undefined };
  };
  const list = (query: Record<string, string> = {}, headers?: Record<string, string>) =>
    call('GET', `/portal/session/audit_logs?${new URLSearchParams(query)}`, undefined, headers);
  const exportOf = (filters: object, headers?: Record<string, string>) =>
    call('POST', '/portal/session/audit_logs/exports', filters, headers);
  return { cookie, csrf, page, html, call, list, exportOf };
}

/** An organization with EVENTS recorded, and an audit_logs session of it. */
async function withEvents(env: TestEnvironment, name = 'Acme') {
  const organization = await newOrganization(env, name);
  for (const spec of EVENTS) await record(env, organization, spec);
  return { organization, s: await portalSession(env, organization) };
}

const actorsOf = (body: { data: { actor: { id: string } }[] }) => body.data.map((e) => e.actor.id);
const actionsOf = (body: { data: { action: string }[] }) => body.data.map((e) => e.action);

/** Runs the export worker (as `npm start` does) until the export has left `pending`. */
async function settle(env: TestEnvironment, id: string): Promise<void> {
  await vi.waitFor(
    async () => {
      // Drained: other files' fixtures leave exports pending in this worker's database too.
      while (await buildNextAuditLogExport(env.deps)) {
        // one export built per call
      }
      const [row] = await env.deps.db.select().from(auditLogExports).where(eq(auditLogExports.id, id));
      expect(row?.state).not.toBe('pending');
    },
    { timeout: 20_000 },
  );
}

describe('the audit_logs portal page', () => {
  it('opens with a link of intent audit_logs and lists the events newest first', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env, 'Log Corp');
    expect(s.page.status).toBe(200);
    expect(s.html).toContain('<title>Log Corp · Audit logs</title>');
    expect(s.html).toContain('<meta name="atrium-portal-intent" content="audit_logs" />');
    expect(s.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const res = await s.list();
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.object).toBe('list');
    expect(res.body.data).toHaveLength(5);
    expect(res.body.data.map((e: { occurred_at: string }) => e.occurred_at)).toEqual(EVENTS.map((e) => e.at).reverse());
    expect(res.body.data[0]).toMatchObject({
      object: 'audit_log_event',
      action: 'user.signed_in',
      actor: { id: 'user_1', type: 'user', name: 'Jon Smith' },
      targets: [{ id: 'team_1', type: 'team', name: 'Team A' }],
      context: { location: '203.0.113.7', user_agent: 'Chrome/104' },
    });
  });

  it.each([
    [{ action: 'document.deleted' }, ['user_3', 'user_2']],
    [{ actor_id: 'user_2' }, ['user_2', 'user_2']],
    [{ actor_name: 'Jon Smith' }, ['user_1', 'user_1']],
    [{ action: 'user.signed_in', actor_id: 'user_2' }, ['user_2']],
    [{ range_start: ago(45 * MINUTE), range_end: ago(15 * MINUTE) }, ['user_3', 'user_2', 'user_2']],
    [{ range_start: ago(25 * MINUTE) }, ['user_1', 'user_3']],
    [{ range_end: ago(35 * MINUTE) }, ['user_2', 'user_1']],
    [{ action: 'user.role_changed' }, []],
  ])('filters by %j', async (query, actors) => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const res = await s.list(query);
    expect(res.status).toBe(200);
    expect(actorsOf(res.body)).toEqual(actors);
    if ('action' in query) expect(new Set(actionsOf(res.body))).toEqual(new Set(actors.length ? [query.action] : []));
  });

  it('pages by cursor: next, then previous', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const first = await s.list({ limit: '2' });
    expect(first.body.data.map((e: { occurred_at: string }) => e.occurred_at)).toEqual([EVENTS[4]?.at, EVENTS[3]?.at]);
    expect(first.body.list_metadata.before).toBeNull();
    const second = await s.list({ limit: '2', after: first.body.list_metadata.after });
    expect(second.body.data.map((e: { occurred_at: string }) => e.occurred_at)).toEqual([EVENTS[2]?.at, EVENTS[1]?.at]);
    const third = await s.list({ limit: '2', after: second.body.list_metadata.after });
    expect(third.body.data.map((e: { occurred_at: string }) => e.occurred_at)).toEqual([EVENTS[0]?.at]);
    expect(third.body.list_metadata.after).toBeNull();
    const back = await s.list({ limit: '2', before: second.body.list_metadata.before });
    expect(back.body.data).toEqual(first.body.data);
    // A filter holds across pages.
    const filtered = await s.list({ limit: '1', action: 'document.deleted' });
    const next = await s.list({ limit: '1', action: 'document.deleted', after: filtered.body.list_metadata.after });
    expect([...actorsOf(filtered.body), ...actorsOf(next.body)]).toEqual(['user_3', 'user_2']);
  });

  it("never shows another organization's events, nor exports them", async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const other = await newOrganization(env, 'Other');
    await record(env, other, { actorId: 'intruder', at: ago(5 * MINUTE) });
    const otherEnv = await newEnvironment();
    const far = await newOrganization(otherEnv, 'Far');
    await record(otherEnv, far, { actorId: 'stranger', at: ago(5 * MINUTE) });
    const res = await s.list({ limit: '100' });
    expect(actorsOf(res.body)).not.toContain('intruder');
    expect(actorsOf(res.body)).not.toContain('stranger');
    expect(res.body.data).toHaveLength(5);
    // Another organization's session does not see this one's export either.
    const created = await s.exportOf({});
    const theirs = await portalSession(env, other);
    expect((await theirs.call('GET', `/portal/session/audit_logs/exports/${created.body.id}`)).status).toBe(404);
    expect(actorsOf((await theirs.list()).body)).toEqual(['intruder']);
  });

  it("refuses another intent's session, no cookie, and no or a wrong CSRF token", async () => {
    const env = await newEnvironment();
    const { organization, s } = await withEvents(env);
    const streams = await portalSession(env, organization, 'log_streams');
    for (const res of [await streams.list(), await streams.exportOf({})]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/audit logs/) });
    }
    // The audit_logs session opens its own page only.
    expect((await fetch(`${env.world.url}/portal/log_streams`, { headers: { cookie: s.cookie } })).status).toBe(401);
    const refusals = [
      await s.list({}, {}),
      await s.list({}, { cookie: s.cookie }),
      await s.list({}, { cookie: s.cookie, 'X-CSRF-Token': 'wrong' }),
      await s.list({}, { 'X-CSRF-Token': s.csrf }),
      await s.exportOf({}, { cookie: s.cookie }),
      await s.exportOf({}, { 'X-CSRF-Token': s.csrf }),
      await s.call('GET', '/portal/session/audit_logs/exports/audit_log_export_x', undefined, { cookie: s.cookie }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect(await storedExports(env)).toHaveLength(0);
  });

  it.each([
    [{ range_start: 'yesterday' }, 'range_start'],
    [{ range_end: '2026-13-01T00:00:00Z' }, 'range_end'],
    [{ range_start: ago(10 * MINUTE), range_end: ago(20 * MINUTE) }, 'range_start'],
    [{ action: 'not an action!' }, 'action'],
    [{ actor_id: 'x'.repeat(257) }, 'actor_id'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '1000' }, 'limit'],
  ])('refuses the filter %j with a JSON 422 naming %s', async (query, field) => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const res = await s.list(query);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    if (field === 'limit') return;
    const exported = await s.exportOf(query);
    expect(exported.status).toBe(422);
    expect(exported.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await storedExports(env)).toHaveLength(0);
  });

  it('refuses a repeated filter (?action=a&action=b) with a 422 naming it', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const res = await s.call('GET', '/portal/session/audit_logs?action=a.b&action=c.d');
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('action');
  });

  it('refuses an export range older than the retention as POST /audit_logs/exports does, storing nothing', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const res = await s.exportOf({ range_start: ago(400 * 24 * 60 * MINUTE) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_audit_log_export_range_date');
    expect(await storedExports(env)).toHaveLength(0);
  });

  it('refuses a fourth pending export with 429, and takes one again once an export is built', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s.exportOf({});
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const fourth = await s.exportOf({});
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe('too_many_pending_exports');
    expect(await storedExports(env)).toHaveLength(3);
    await settle(env, ids[0] ?? '');
    expect((await s.exportOf({})).status).toBe(201);
  });

  it('exports the filtered events: pending, then ready with a signed link to a CSV of only those rows', async () => {
    const env = await newEnvironment();
    const { organization, s } = await withEvents(env);
    const filters = { action: 'user.signed_in', range_start: ago(35 * MINUTE) };
    const created = await s.exportOf(filters);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'audit_log_export', state: 'pending' });
    expect(created.body.url).toBeUndefined();
    const [row] = await storedExports(env);
    expect(row).toMatchObject({ organizationId: organization, filters: { actions: ['user.signed_in'] } });
    const pending = await s.call('GET', `/portal/session/audit_logs/exports/${created.body.id}`);
    expect(pending.body).toMatchObject({ id: created.body.id, state: 'pending' });
    await settle(env, created.body.id);
    const ready = await s.call('GET', `/portal/session/audit_logs/exports/${created.body.id}`);
    expect(ready.status).toBe(200);
    expect(ready.body.state).toBe('ready');
    // The same link `GET /audit_logs/exports/:id` gives (a fresh signature each time, same path).
    const api = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    expect(new URL(ready.body.url).pathname).toBe(new URL(api.body.url).pathname);
    const url = new URL(ready.body.url);
    const download = await fetch(`${env.world.url}${url.pathname}${url.search}`);
    expect(download.status).toBe(200);
    const rows: string[][] = parse(await download.text());
    expect(rows[0]).toEqual([...EXPORT_CSV_COLUMNS]);
    // user.signed_in since 35 minutes ago: the events of 30 and 10 minutes ago, oldest first.
    expect(rows.slice(1).map((r) => [r[1], r[3], r[2]])).toEqual([
      ['user.signed_in', 'user_2', EVENTS[2]?.at],
      ['user.signed_in', 'user_1', EVENTS[4]?.at],
    ]);
  });

  it('exports by actor name, and with no filter everything the organization keeps', async () => {
    const env = await newEnvironment();
    const { s } = await withEvents(env);
    const byName = await s.exportOf({ actor_name: 'Ann Lee' });
    await settle(env, byName.body.id);
    const all = await s.exportOf({});
    await settle(env, all.body.id);
    const csvOf = async (id: string) => {
      const url = new URL((await s.call('GET', `/portal/session/audit_logs/exports/${id}`)).body.url);
      const rows: string[][] = parse(await (await fetch(`${env.world.url}${url.pathname}${url.search}`)).text());
      return rows.slice(1).map((r) => r[3]);
    };
    expect(await csvOf(byName.body.id)).toEqual(['user_2', 'user_2']);
    expect(await csvOf(all.body.id)).toEqual(EVENTS.map((e) => e.actorId));
  });

  it('generate_link with intent audit_logs mails the link with its purpose', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env, 'Mail Corp');
    const sent: MailMessage[] = [];
    const deps = { ...env.deps, mailer: { send: async (m: MailMessage) => void sent.push(m) } };
    const caller = createCaller(createInnerContext(deps, `Bearer ${env.apiKey}`));
    const { link } = await caller.portal.generateLink({
      organization,
      intent: 'audit_logs',
      admin_emails: ['it@mail.example'],
    });
    expect(sent[0]?.text).toContain('Use this link to review and export your audit logs for Mail Corp.');
    expect(sent[0]?.text).toContain(link);
  });

  it('generate-link?intent=audit_logs needs widgets:audit-log-streaming:manage; a portal token gets its own page', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const made = await env.http.post('/authorization/roles', { slug: 'log-reader', name: 'Log reader' });
    expect(made.status).toBe(201);
    const scope = 'widgets:audit-log-streaming:manage';
    expect((await env.http.put('/authorization/roles/log-reader/permissions', { permissions: [scope] })).status).toBe(
      200,
    );
    const admin = await clientSetup(env, { organizationId: organization, scopes: [scope], roleSlug: 'log-reader' });
    const res = await admin.http.post('/_widgets/admin-portal/generate-link?intent=audit_logs');
    expect(res.status).toBe(201);
    const { res: opened } = await openLink(env, res.body.link);
    expect(opened.headers.get('location')).toBe('/portal/audit_logs');
    const member = await clientSetup(env, { organizationId: organization, scopes: ['widgets:users-table:manage'] });
    expect((await member.http.post('/_widgets/admin-portal/generate-link?intent=audit_logs')).status).toBe(403);
    // The page's own portal token gets its page back, never a new link.
    const s = await portalSession(env, organization);
    const token = (await s.call('POST', '/portal/session/token')).body.token as string;
    const own = await fetch(`${env.world.url}/_widgets/admin-portal/generate-link?intent=audit_logs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'WorkOS-Widgets-Version': '1' },
    });
    expect(((await own.json()) as { link: string }).link).toBe(`${TEST_ISSUER}/portal/audit_logs`);
  });
});

describe.each([
  ['AuditLogs', 'audit_logs', 'widgets:audit-log-streaming:manage'],
  ['LogStreams', 'log_streams', 'widgets:audit-log-streaming:manage'],
  ['Dsync', 'dsync', 'widgets:dsync:manage'],
])(
  'GraphQL and typed tRPC createAdminPortalLink(intent: %s), as REST generate-link?intent=%s',
  (intent, rest, scope) => {
    const storedLinks = (env: TestEnvironment) =>
      env.deps.db.select().from(portalLinks).where(eq(portalLinks.environmentId, env.environmentId));

    it(`a link to the intent's page with ${scope}; without it FORBIDDEN, nothing stored`, async () => {
      const env = await newEnvironment();
      const organization = await newOrganization(env);
      const admin = await clientSetup(env, { organizationId: organization, scopes: [scope], roleSlug: 'admin' });
      const gql = await admin.graphql(
        `mutation { createAdminPortalLink(intent: ${intent}) { link intent expiresAt } }`,
      );
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.createAdminPortalLink).toEqual({
        link: expect.stringContaining('/portal/launch?apiToken='),
        intent,
        expiresAt: expect.any(String),
      });
      const { res } = await openLink(env, gql.body.data.createAdminPortalLink.link);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`/portal/${rest}`);
      const trpc = createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${env.world.url}/trpc`, headers: { Authorization: `Bearer ${admin.token}` } })],
      });
      const typed = await trpc.client.adminPortal.createLink.mutate({ intent: intent as 'AuditLogs' });
      expect(typed.intent).toBe(intent);
      const links = await storedLinks(env);
      expect(links.map((l) => [l.organizationId, l.intent])).toEqual([
        [organization, rest],
        [organization, rest],
      ]);

      const member = await clientSetup(env, { organizationId: organization, scopes: ['widgets:users-table:manage'] });
      const denied = await member.graphql(`mutation { createAdminPortalLink(intent: ${intent}) { link } }`);
      expect(denied.body.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(await storedLinks(env)).toHaveLength(2);
    });
  },
);
