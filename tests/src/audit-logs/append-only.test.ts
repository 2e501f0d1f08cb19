import { auditLogEvents, newId } from '@atrium/db';
import { appRouter, procedureEntries, purgeExpiredAuditLogs } from '@atrium/routers';
import { retentionSweep } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCaller } from '../helpers/tokens.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

beforeAll(() => getWorld());

const DAY = 86_400_000;
const storedEvents = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogEvents).where(eq(auditLogEvents.environmentId, env.environmentId));

async function organization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const res = await env.http.post('/organizations', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Stores an event that occurred `daysAgo` before `now` directly (the API refuses those past retention). */
async function storeEvent(env: TestEnvironment, organizationId: string, now: Date, daysAgo: number, action = 'a.b') {
  const id = newId('auditLogEvent');
  await env.deps.db.insert(auditLogEvents).values({
    id,
    environmentId: env.environmentId,
    organizationId,
    action,
    occurredAt: new Date(now.getTime() - daysAgo * DAY),
    actor: { id: 'u', type: 'user' },
    targets: [],
    context: { location: '203.0.113.1' },
  });
  return id;
}

describe('audit log events are append-only', () => {
  it('no REST route updates or deletes an event: the audit-log routes are GET, POST-create (events, schemas, exports), or the retention PUT', async () => {
    const env = await newEnvironment();
    const doc = (await env.http.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths)
      .filter(([path]) => path.includes('audit_log'))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(routes).toEqual([
      'GET /audit_logs/actions',
      'GET /audit_logs/actions/{actionName}/schemas',
      'GET /audit_logs/exports/{auditLogExportId}',
      'GET /organizations/{id}/audit_log_configuration',
      'GET /organizations/{id}/audit_logs_retention',
      'POST /audit_logs/actions/{actionName}/schemas',
      'POST /audit_logs/events',
      'POST /audit_logs/exports',
      'PUT /organizations/{id}/audit_logs_retention',
    ]);
  });

  it('no tRPC procedure updates or deletes one: the only mutations create, or set the retention', () => {
    const procedures = procedureEntries(appRouter)
      .filter((entry) => /audit/i.test(entry.path))
      .map((entry) => `${entry.type} ${entry.path}`)
      .sort();
    expect(procedures).toEqual([
      'mutation auditLogs.events.create',
      'mutation auditLogs.exports.create',
      'mutation auditLogs.retention.update',
      'mutation auditLogs.schemas.create',
      'query admin.auditLogs.list',
      'query admin.auditLogs.stream',
      'query auditLogs.actions.list',
      'query auditLogs.configuration.get',
      'query auditLogs.exports.get',
      'query auditLogs.retention.get',
      'query auditLogs.schemas.list',
      'query widgets.auditLogStream',
    ]);
  });

  it('refuses every direct attempt to change or delete an event, through REST and tRPC, changing nothing', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const id = await storeEvent(env, org, new Date(), 1);
    const before = await storedEvents(env);
    for (const res of [
      await env.http.delete('/audit_logs/events'),
      await env.http.delete(`/audit_logs/events/${id}`),
      await env.http.patch(`/audit_logs/events/${id}`, { action: 'x.y' }),
      await env.http.put(`/audit_logs/events/${id}`, { action: 'x.y' }),
      await env.http.put('/audit_logs/events', { organization_id: org, event: {} }),
      await env.http.request('DELETE', `/organizations/${org}/audit_logs`),
    ]) {
      expect([404, 405]).toContain(res.status);
    }
    const trpc = await fetch(`${env.world.url}/trpc/auditLogs.events.delete`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id }),
    });
    expect(trpc.status).toBe(404);
    expect(await storedEvents(env)).toEqual(before);
  });

  it("outlives its organization's deletion until its retention ends", async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await env.http.post('/audit_logs/events', {
      organization_id: org,
      event: {
        action: 'user.signed_in',
        occurred_at: new Date().toISOString(),
        actor: { id: 'u', type: 'user' },
        targets: [],
        context: { location: '203.0.113.1' },
      },
    });
    expect((await env.http.delete(`/organizations/${org}`)).status).toBe(204);
    expect((await storedEvents(env)).map((e) => e.organizationId)).toEqual([org]);
  });
});

describe('the retention sweep and audit log events', () => {
  it("deletes, at a fixed clock, exactly the events past their organization's retention (365 days by default)", async () => {
    const env = await newEnvironment();
    const now = new Date();
    const clock = { ...env.deps, now: () => now };
    const month = await organization(env, 'Monthly');
    expect(
      (await env.http.put(`/organizations/${month}/audit_logs_retention`, { retention_period_in_days: 30 })).status,
    ).toBe(200);
    const year = await organization(env, 'Yearly');
    const gone = await organization(env, 'Deleted');

    const kept = [
      await storeEvent(env, month, now, 29),
      await storeEvent(env, year, now, 31),
      await storeEvent(env, year, now, 364),
      await storeEvent(env, gone, now, 364),
    ];
    const expired = [
      await storeEvent(env, month, now, 31),
      await storeEvent(env, month, now, 400),
      await storeEvent(env, year, now, 366),
      await storeEvent(env, gone, now, 366),
    ];
    expect((await env.http.delete(`/organizations/${gone}`)).status).toBe(204);

    const purged = await retentionSweep(clock);
    expect(purged.audit_log_events).toBeGreaterThanOrEqual(expired.length);
    expect((await storedEvents(env)).map((e) => e.id).sort()).toEqual(kept.sort());
    // A second sweep at the same clock finds nothing of this environment's.
    await retentionSweep(clock);
    expect((await storedEvents(env)).map((e) => e.id).sort()).toEqual(kept.sort());
  });

  it('deletes in batches until none is left', async () => {
    const env = await newEnvironment();
    const now = new Date();
    const org = await organization(env);
    for (let i = 0; i < 5; i++) await storeEvent(env, org, now, 400 + i);
    const keep = await storeEvent(env, org, now, 10);
    const purged = await purgeExpiredAuditLogs({ ...env.deps, now: () => now }, 2);
    expect(purged).toBeGreaterThanOrEqual(5);
    expect((await storedEvents(env)).map((e) => e.id)).toEqual([keep]);
  });
});

describe('the console view (admin tRPC)', () => {
  it("lists an organization's events newest first, paged, filtered by action, 404 for an unknown organization", async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const other = await organization(env, 'Other');
    const now = new Date();
    const ids = [];
    for (const action of ['user.signed_in', 'invoice.paid', 'user.signed_in'])
      ids.push(await storeEvent(env, org, now, 1, action));
    await storeEvent(env, other, now, 1);
    const admin = await adminCaller();
    const first = await admin.auditLogs.list({
      environment: env.environmentId,
      organization_id: org,
      limit: 2,
      order: 'desc',
    });
    expect(first.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(first.data[0]).toMatchObject({
      object: 'audit_log_event',
      organization_id: org,
      action: 'user.signed_in',
      version: 1,
    });
    expect(first.data[0]).not.toHaveProperty('metadata');
    const second = await admin.auditLogs.list({
      environment: env.environmentId,
      organization_id: org,
      limit: 2,
      order: 'desc',
      after: first.list_metadata.after ?? undefined,
    });
    expect(second.data.map((e) => e.id)).toEqual([ids[0]]);
    expect(second.list_metadata.after).toBeNull();
    const filtered = await admin.auditLogs.list({
      environment: env.environmentId,
      organization_id: org,
      action: 'invoice.paid',
      limit: 10,
      order: 'desc',
    });
    expect(filtered.data.map((e) => e.id)).toEqual([ids[1]]);
    await expect(
      admin.auditLogs.list({
        environment: env.environmentId,
        organization_id: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ',
        limit: 10,
        order: 'desc',
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
