import { auditLogExportParts, auditLogExports } from '@atrium/db';
import {
  buildNextAuditLogExport,
  EXPORT_CSV_COLUMNS,
  EXPORT_KEEP_MS,
  EXPORT_URL_TTL_MS,
  purgeExpiredAuditLogExports,
  signedExportUrl,
} from '@atrium/routers';
import { retentionSweep } from '@atrium/server';
import { parse } from 'csv-parse/sync';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

const storedExports = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogExports).where(eq(auditLogExports.environmentId, env.environmentId));

async function organization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const res = await env.http.post('/organizations', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

interface EventSpec {
  action?: string;
  actorId?: string;
  actorName?: string;
  target?: string;
  at?: string;
}

/** Records an event through the API; its `occurred_at` defaults to ten minutes ago. */
async function record(env: TestEnvironment, org: string, spec: EventSpec = {}): Promise<void> {
  const res = await env.http.post('/audit_logs/events', {
    organization_id: org,
    event: {
      action: spec.action ?? 'user.signed_in',
      occurred_at: spec.at ?? ago(10 * MINUTE),
      actor: {
        id: spec.actorId ?? 'user_1',
        type: 'user',
        name: spec.actorName ?? 'Jon Smith',
        metadata: { role: 'admin' },
      },
      targets: [{ id: 'team_1', type: spec.target ?? 'team', name: 'Team, "A"' }],
      context: { location: '203.0.113.7', user_agent: 'Chrome/104' },
      metadata: { paid: true },
    },
  });
  expect(res.status).toBe(200);
}

/** Runs the export worker (as `npm start` does) until the export has left `pending`. */
async function settle(
  env: TestEnvironment,
  id: string,
  options: { partBytes?: number; pageRows?: number } = {},
): Promise<void> {
  await vi.waitFor(
    async () => {
      // Drained: other files' fixtures leave exports pending in this worker's database too.
      while (await buildNextAuditLogExport(env.deps, options)) {
        // one export built per call
      }
      const [row] = await env.deps.db.select().from(auditLogExports).where(eq(auditLogExports.id, id));
      expect(row?.state).not.toBe('pending');
    },
    { timeout: 20_000 },
  );
}

/** The signed link's path and query, against the test server (the link names the public base URL). */
const local = (env: TestEnvironment, url: string) => {
  const u = new URL(url);
  return `${env.world.url}${u.pathname}${u.search}`;
};

async function download(env: TestEnvironment, url: string) {
  const res = await fetch(local(env, url));
  const text = await res.text();
  return { res, text };
}

/** Creates an export, builds it, and returns the rows of its CSV (header excluded). */
async function exportRows(env: TestEnvironment, body: Record<string, unknown>): Promise<string[][]> {
  const created = await env.http.post('/audit_logs/exports', body);
  expect(created.status).toBe(201);
  await settle(env, created.body.id);
  const ready = await env.http.get(`/audit_logs/exports/${created.body.id}`);
  expect(ready.body.state).toBe('ready');
  const { res, text } = await download(env, ready.body.url);
  expect(res.status).toBe(200);
  const [header, ...rows] = parse(text) as string[][];
  expect(header).toEqual([...EXPORT_CSV_COLUMNS]);
  return rows;
}

describe('POST /audit_logs/exports, GET /audit_logs/exports/:id, the download', () => {
  it('creates a pending export, the worker builds it, the signed link serves its CSV', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org, { action: 'user.signed_in', at: ago(20 * MINUTE) });
    await record(env, org, { action: 'team.created', at: ago(10 * MINUTE) });
    const body = { organization_id: org, range_start: ago(60 * MINUTE), range_end: new Date().toISOString() };
    const created = await env.http.post('/audit_logs/exports', body);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'audit_log_export',
      id: expect.stringMatching(/^audit_log_export_[0-9A-Z]{26}$/),
      state: 'pending',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const pending = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    expect(pending.status).toBe(200);
    expect(pending.body.state).toBe('pending');
    expect('url' in pending.body).toBe(false);

    await settle(env, created.body.id);
    const ready = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    expect(ready.body).toMatchObject({ object: 'audit_log_export', id: created.body.id, state: 'ready' });
    expect(ready.body.url).toMatch(
      new RegExp(
        `^http://127\\.0\\.0\\.1/audit_logs/exports/${created.body.id}/download\\?expires=\\d+&signature=[\\w-]{43}$`,
      ),
    );
    const expires = Number(new URL(ready.body.url).searchParams.get('expires'));
    expect(expires * 1000 - Date.now()).toBeGreaterThan(9 * MINUTE);
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(10 * MINUTE);

    const { res, text } = await download(env, ready.body.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${created.body.id}.csv"`);
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const [header, first, second, ...rest] = parse(text) as string[][];
    expect(header).toEqual([...EXPORT_CSV_COLUMNS]);
    expect(rest).toEqual([]);
    // Oldest first; each column as docs/audit-logs.md lists it.
    expect(first).toEqual([
      expect.stringMatching(/^audit_log_event_/),
      'user.signed_in',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      'user_1',
      'user',
      'Jon Smith',
      '{"role":"admin"}',
      '[{"id":"team_1","name":"Team, \\"A\\"","type":"team"}]',
      '203.0.113.7',
      'Chrome/104',
      '{"paid":true}',
      '1',
    ]);
    expect(second?.[1]).toBe('team.created');
    const [row] = await storedExports(env);
    expect(row).toMatchObject({ state: 'ready', rowCount: 2, partCount: 1, attempts: 1, leaseUntil: null });
  });

  it('stores a large CSV in several parts and streams them back in order', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    for (let i = 0; i < 12; i++) await record(env, org, { actorId: `user_${i}`, at: ago((30 - i) * MINUTE) });
    const created = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date().toISOString(),
    });
    await settle(env, created.body.id, { partBytes: 300, pageRows: 2 });
    const parts = await env.deps.db
      .select()
      .from(auditLogExportParts)
      .where(eq(auditLogExportParts.exportId, created.body.id));
    expect(parts.length).toBeGreaterThan(3);
    const ready = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    const { text } = await download(env, ready.body.url);
    const rows = (parse(text) as string[][]).slice(1);
    expect(rows.map((r) => r[3])).toEqual(Array.from({ length: 12 }, (_, i) => `user_${i}`));
  });

  it('each filter and the range change the rows', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org, { action: 'a.one', actorId: 'u_1', actorName: 'Ann', target: 'team', at: ago(50 * MINUTE) });
    await record(env, org, { action: 'a.two', actorId: 'u_2', actorName: 'Bob', target: 'doc', at: ago(40 * MINUTE) });
    await record(env, org, { action: 'a.one', actorId: 'u_2', actorName: 'Bob', target: 'doc', at: ago(30 * MINUTE) });
    await record(env, org, { action: 'a.three', actorId: 'u_3', actorName: 'Cy', target: 'team', at: ago(5 * MINUTE) });
    const range = { organization_id: org, range_start: ago(60 * MINUTE), range_end: new Date().toISOString() };
    const actions = (rows: string[][]) => rows.map((r) => `${r[1]}/${r[3]}`);
    expect(actions(await exportRows(env, range))).toEqual(['a.one/u_1', 'a.two/u_2', 'a.one/u_2', 'a.three/u_3']);
    expect(actions(await exportRows(env, { ...range, actions: ['a.one'] }))).toEqual(['a.one/u_1', 'a.one/u_2']);
    expect(actions(await exportRows(env, { ...range, actor_ids: ['u_2', 'u_3'] }))).toEqual([
      'a.two/u_2',
      'a.one/u_2',
      'a.three/u_3',
    ]);
    expect(actions(await exportRows(env, { ...range, actor_names: ['Ann'] }))).toEqual(['a.one/u_1']);
    // `actors` is upstream's deprecated name of `actor_names`.
    expect(actions(await exportRows(env, { ...range, actors: ['Cy'] }))).toEqual(['a.three/u_3']);
    expect(actions(await exportRows(env, { ...range, targets: ['doc'] }))).toEqual(['a.two/u_2', 'a.one/u_2']);
    expect(
      actions(await exportRows(env, { ...range, range_start: ago(45 * MINUTE), range_end: ago(20 * MINUTE) })),
    ).toEqual(['a.two/u_2', 'a.one/u_2']);
    expect(actions(await exportRows(env, { ...range, actions: ['a.one'], targets: ['team'] }))).toEqual(['a.one/u_1']);
    // Another organization's events never appear.
    const other = await organization(env, 'Other');
    await record(env, other, { action: 'a.one' });
    expect(await exportRows(env, { ...range, organization_id: other, actions: ['a.two'] })).toEqual([]);
  });

  it('is a snapshot: an event recorded after the build is not in the CSV', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org, { actorId: 'before' });
    const created = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date(Date.now() + MINUTE).toISOString(),
    });
    await settle(env, created.body.id);
    await record(env, org, { actorId: 'after', at: ago(MINUTE) });
    const ready = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    const rows = (parse((await download(env, ready.body.url)).text) as string[][]).slice(1);
    expect(rows.map((r) => r[3])).toEqual(['before']);
  });

  it('two workers at once build an export once (the lease)', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org);
    const created = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date().toISOString(),
    });
    await vi.waitFor(
      async () => {
        await Promise.all([buildNextAuditLogExport(env.deps), buildNextAuditLogExport(env.deps)]);
        const [row] = await storedExports(env);
        expect(row?.state).toBe('ready');
      },
      { timeout: 20_000 },
    );
    const [row] = await storedExports(env);
    expect(row).toMatchObject({ id: created.body.id, attempts: 1 });
  });
});

describe('refusals store nothing', () => {
  const cases: Array<[string, (org: string) => Record<string, unknown>, number, string]> = [
    [
      'start after end',
      (org) => ({ organization_id: org, range_start: ago(MINUTE), range_end: ago(2 * MINUTE) }),
      400,
      'invalid_audit_log_export_range_date',
    ],
    [
      'start beyond retention',
      (org) => ({ organization_id: org, range_start: ago(400 * 86_400_000), range_end: ago(MINUTE) }),
      400,
      'invalid_audit_log_export_range_date',
    ],
    [
      'not a date',
      (org) => ({ organization_id: org, range_start: 'yesterday', range_end: ago(MINUTE) }),
      422,
      'invalid_request_parameters',
    ],
    ['no range', (org) => ({ organization_id: org }), 422, 'invalid_request_parameters'],
    [
      'actions not a list',
      (org) => ({ organization_id: org, range_start: ago(2 * MINUTE), range_end: ago(MINUTE), actions: 'a.one' }),
      422,
      'invalid_request_parameters',
    ],
    [
      'unknown organization',
      () => ({
        organization_id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ',
        range_start: ago(2 * MINUTE),
        range_end: ago(MINUTE),
      }),
      404,
      'entity_not_found',
    ],
  ];

  it.each(cases)('%s', async (_name, body, status, code) => {
    const env = await newEnvironment();
    const org = await organization(env);
    const res = await env.http.post('/audit_logs/exports', body(org));
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(typeof res.body.message).toBe('string');
    expect(await storedExports(env)).toEqual([]);
  });

  it("another environment's organization is 404 and its export is 404", async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const orgA = await organization(a);
    const range = { range_start: ago(2 * MINUTE), range_end: ago(MINUTE) };
    const refused = await b.http.post('/audit_logs/exports', { organization_id: orgA, ...range });
    expect(refused.status).toBe(404);
    expect(await storedExports(b)).toEqual([]);
    const created = await a.http.post('/audit_logs/exports', { organization_id: orgA, ...range });
    const read = await b.http.get(`/audit_logs/exports/${created.body.id}`);
    expect(read.status).toBe(404);
    expect(read.body.code).toBe('entity_not_found');
    const none = await a.http.get('/audit_logs/exports/audit_log_export_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(none.status).toBe(404);
    const anonymous = await fetch(`${a.world.url}/audit_logs/exports/${created.body.id}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('the signed link', () => {
  async function readyExport(env: TestEnvironment): Promise<{ id: string; url: string }> {
    const org = await organization(env);
    await record(env, org);
    const created = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date().toISOString(),
    });
    await settle(env, created.body.id);
    const ready = await env.http.get(`/audit_logs/exports/${created.body.id}`);
    return { id: created.body.id, url: ready.body.url };
  }

  it('refuses a tampered id, expiry or signature with a JSON 403, and serves the genuine one', async () => {
    const env = await newEnvironment();
    const one = await readyExport(env);
    const two = await readyExport(env);
    const u = new URL(one.url);
    const expires = u.searchParams.get('expires') as string;
    const signature = u.searchParams.get('signature') as string;
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const tampered = [
      `/audit_logs/exports/${two.id}/download?expires=${expires}&signature=${signature}`,
      `/audit_logs/exports/${one.id}/download?expires=${Number(expires) + 3600}&signature=${signature}`,
      `/audit_logs/exports/${one.id}/download?expires=${expires}&signature=${flipped}`,
      `/audit_logs/exports/${one.id}/download?expires=${expires}`,
      `/audit_logs/exports/${one.id}/download`,
      `/audit_logs/exports/${one.id}/download?expires=soon&signature=${signature}`,
    ];
    for (const path of tampered) {
      const res = await fetch(`${env.world.url}${path}`);
      expect(res.status, path).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await res.json()).code, path).toBe('invalid_signature');
    }
    expect((await download(env, one.url)).res.status).toBe(200);
    const post = await fetch(local(env, one.url), { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('refuses an expired link (403 link_expired); a fresh GET makes a fresh link', async () => {
    const env = await newEnvironment();
    const { id } = await readyExport(env);
    const stale = signedExportUrl(env.deps, id, new Date(Date.now() - 11 * MINUTE));
    const res = await fetch(local(env, stale));
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('link_expired');
    // Each read signs anew: a later clock gives a later expiry.
    const later = signedExportUrl(env.deps, id, new Date(Date.now() + 5 * MINUTE));
    const now = (await env.http.get(`/audit_logs/exports/${id}`)).body.url;
    expect(new URL(later).searchParams.get('expires')).not.toBe(new URL(now).searchParams.get('expires'));
    expect((await download(env, now)).res.status).toBe(200);
  });

  it("a link of a deleted organization's export is 404", async () => {
    const env = await newEnvironment();
    const { id, url } = await readyExport(env);
    const [row] = await storedExports(env);
    expect((await env.http.delete(`/organizations/${row?.organizationId}`)).status).toBe(204);
    const res = await fetch(local(env, url));
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('entity_not_found');
    expect(await env.deps.db.select().from(auditLogExportParts).where(eq(auditLogExportParts.exportId, id))).toEqual(
      [],
    );
  });
});

describe('retention: a finished export goes a day after it finished', () => {
  async function finishedExport(env: TestEnvironment, org: string): Promise<string> {
    const created = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date().toISOString(),
    });
    expect(created.status).toBe(201);
    await settle(env, created.body.id, { partBytes: 1, pageRows: 1 });
    return created.body.id;
  }
  const partsOf = (env: TestEnvironment, id: string) =>
    env.deps.db.select().from(auditLogExportParts).where(eq(auditLogExportParts.exportId, id));
  const finishedAgo = (env: TestEnvironment, id: string, ms: number) =>
    env.deps.db
      .update(auditLogExports)
      .set({ updatedAt: new Date(Date.now() - ms) })
      .where(eq(auditLogExports.id, id));

  it('404 once kept a day; the sweep deletes it and its parts after the last link expired; a fresh one stays', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org, { at: ago(20 * MINUTE) });
    await record(env, org, { at: ago(10 * MINUTE) });
    const old = await finishedExport(env, org);
    const lingering = await finishedExport(env, org);
    const fresh = await finishedExport(env, org);
    expect((await partsOf(env, old)).length).toBeGreaterThan(1);
    const stale = (await env.http.get(`/audit_logs/exports/${lingering}`)).body.url;
    await finishedAgo(env, old, EXPORT_KEEP_MS + EXPORT_URL_TTL_MS + MINUTE);
    // Past the keep, but its last link may still be live: unreadable, not yet deleted.
    await finishedAgo(env, lingering, EXPORT_KEEP_MS + MINUTE);

    const gone = await env.http.get(`/audit_logs/exports/${lingering}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('entity_not_found');
    expect((await download(env, stale)).res.status).toBe(200);

    const purged = await retentionSweep(env.deps);
    expect(purged.audit_log_exports).toBeGreaterThanOrEqual(1);
    expect((await storedExports(env)).map((e) => e.id).sort()).toEqual([lingering, fresh].sort());
    expect(await partsOf(env, old)).toEqual([]);
    expect((await partsOf(env, lingering)).length).toBeGreaterThan(1);
    expect((await partsOf(env, fresh)).length).toBeGreaterThan(1);
    const res = await env.http.get(`/audit_logs/exports/${old}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'entity_not_found', message: `Audit Log Export not found: '${old}'.` });
    const current = await env.http.get(`/audit_logs/exports/${fresh}`);
    expect(current.body.state).toBe('ready');
    expect((await download(env, current.body.url)).res.status).toBe(200);
  });

  it('deletes in batches until none is left, and never a pending export', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await record(env, org);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await finishedExport(env, org));
    for (const id of ids) await finishedAgo(env, id, 2 * EXPORT_KEEP_MS);
    const pending = await env.http.post('/audit_logs/exports', {
      organization_id: org,
      range_start: ago(60 * MINUTE),
      range_end: new Date().toISOString(),
    });
    await finishedAgo(env, pending.body.id, 2 * EXPORT_KEEP_MS);
    expect(await purgeExpiredAuditLogExports(env.deps, 2)).toBeGreaterThanOrEqual(3);
    expect((await storedExports(env)).map((e) => [e.id, e.state])).toEqual([[pending.body.id, 'pending']]);
  });
});

describe('official SDK: auditLogs.createExport / getExport', () => {
  it('creates and reads an export, unchanged', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await record(env, org.id);
    const created = await workos.auditLogs.createExport({
      organizationId: org.id,
      rangeStart: new Date(Date.now() - 60 * MINUTE),
      rangeEnd: new Date(),
      actions: ['user.signed_in'],
      actorNames: ['Jon Smith'],
      targets: ['team'],
    });
    expect(created).toEqual({
      object: 'audit_log_export',
      id: expect.stringMatching(/^audit_log_export_/),
      state: 'pending',
      url: undefined,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    await settle(env, created.id);
    const ready = await workos.auditLogs.getExport(created.id);
    expect(ready.state).toBe('ready');
    const rows = (parse((await download(env, ready.url as string)).text) as string[][]).slice(1);
    expect(rows).toHaveLength(1);
  });
});
