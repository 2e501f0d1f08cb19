import { auditLogActions, auditLogEvents, auditLogSchemas, idempotencyKeys } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

const storedEvents = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogEvents).where(eq(auditLogEvents.environmentId, env.environmentId));
const storedSchemas = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogSchemas).where(eq(auditLogSchemas.environmentId, env.environmentId));

async function organization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const res = await env.http.post('/organizations', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** An event as upstream's example writes it, `occurred_at` one minute ago. */
function event(overrides: Record<string, unknown> = {}) {
  return {
    action: 'user.signed_in',
    occurred_at: new Date(Date.now() - 60_000).toISOString(),
    actor: { id: 'user_TF4C5938', type: 'user', name: 'Jon Smith', metadata: { role: 'admin' } },
    targets: [{ id: 'team_123', type: 'team', metadata: { seats: 4 } }],
    context: { location: '123.123.123.123', user_agent: 'Chrome/104.0.0.0' },
    metadata: { owner: 'user_01GBTCQ2', paid: true },
    ...overrides,
  };
}

const teamSchema = {
  actor: { metadata: { type: 'object', properties: { role: { type: 'string' } } } },
  targets: [{ type: 'team', metadata: { type: 'object', properties: { seats: { type: 'number' } } } }],
  metadata: { type: 'object', properties: { owner: { type: 'string' }, paid: { type: 'boolean' } } },
};

describe('POST /audit_logs/events', () => {
  it('stores the event as sent and answers 200 {success: true}', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const sent = event();
    const res = await env.http.post('/audit_logs/events', { organization_id: org, event: sent });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const [row, ...rest] = await storedEvents(env);
    expect(rest).toEqual([]);
    expect(row).toMatchObject({
      id: expect.stringMatching(/^audit_log_event_[0-9A-Z]{26}$/),
      organizationId: org,
      action: 'user.signed_in',
      occurredAt: new Date(sent.occurred_at),
      actor: sent.actor,
      targets: sent.targets,
      context: sent.context,
      metadata: sent.metadata,
      version: 1,
    });
  });

  it('honours Idempotency-Key: a retry answers the first response and stores nothing more', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const body = { organization_id: org, event: event() };
    const headers = { 'Idempotency-Key': 'f3b5c8e2-audit-1' };
    const first = await env.http.post('/audit_logs/events', body, headers);
    const again = await env.http.post('/audit_logs/events', body, headers);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedEvents(env)).toHaveLength(1);
    const keys = await env.deps.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.environmentId, env.environmentId), eq(idempotencyKeys.key, 'f3b5c8e2-audit-1')));
    expect(keys).toHaveLength(1);
    // The same key with another body is refused, and stores nothing.
    const other = await env.http.post(
      '/audit_logs/events',
      { organization_id: org, event: event({ action: 'x.y' }) },
      headers,
    );
    expect(other.status).toBe(409);
    expect(await storedEvents(env)).toHaveLength(1);
    // Without a key, the same body is a second event.
    expect((await env.http.post('/audit_logs/events', body)).status).toBe(200);
    expect(await storedEvents(env)).toHaveLength(2);
  });

  const hour = 3_600_000;
  const day = 24 * hour;
  describe.each([
    ['no organization_id', () => ({ organization_id: undefined, event: event() }), 422, 'organization_id'],
    ['no action', () => ({ event: { ...event(), action: undefined } }), 422, 'event.action'],
    ['no actor', () => ({ event: { ...event(), actor: undefined } }), 422, 'event.actor'],
    ['no context location', () => ({ event: event({ context: {} }) }), 422, 'event.context.location'],
    ['a bad occurred_at', () => ({ event: event({ occurred_at: 'yesterday' }) }), 422, 'event.occurred_at'],
    [
      '51 metadata keys',
      () => ({ event: event({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 1])) }) }),
      422,
      'event.metadata',
    ],
    [
      'an object metadata value',
      () => ({ event: event({ metadata: { nested: { a: 1 } } }) }),
      422,
      'event.metadata.nested',
    ],
    [
      'a metadata value over 500 chars',
      () => ({ event: event({ metadata: { long: 'x'.repeat(501) } }) }),
      422,
      'event.metadata.long',
    ],
    ['a version of 0', () => ({ event: event({ version: 0 }) }), 422, 'event.version'],
    [
      'occurred_at an hour ahead',
      () => ({ event: event({ occurred_at: new Date(Date.now() + hour).toISOString() }) }),
      422,
      'event.occurred_at',
    ],
    [
      'occurred_at older than the retention',
      () => ({ event: event({ occurred_at: new Date(Date.now() - 366 * day).toISOString() }) }),
      422,
      'event.occurred_at',
    ],
  ])('refuses %s, storing nothing', (_label, body, status, field) => {
    it(`answers ${status} naming ${field}`, async () => {
      const env = await newEnvironment();
      const org = await organization(env);
      const res = await env.http.post('/audit_logs/events', { organization_id: org, ...body() });
      expect(res.status).toBe(status);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await storedEvents(env)).toEqual([]);
    });
  });

  it('accepts occurred_at within the clock skew ahead (30 s) and at 364 days old', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    for (const at of [Date.now() + 30_000, Date.now() - 364 * day]) {
      const res = await env.http.post('/audit_logs/events', {
        organization_id: org,
        event: event({ occurred_at: new Date(at).toISOString() }),
      });
      expect(res.status).toBe(200);
    }
    expect(await storedEvents(env)).toHaveLength(2);
  });

  it("is 404 for an unknown organization and for another environment's, storing nothing", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreign = await organization(other);
    for (const id of ['org_01HZZZZZZZZZZZZZZZZZZZZZZZ', foreign]) {
      const res = await env.http.post('/audit_logs/events', { organization_id: id, event: event() });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'entity_not_found', message: `Organization not found: '${id}'.` });
    }
    expect(await storedEvents(env)).toEqual([]);
    expect(await storedEvents(other)).toEqual([]);
  });

  it("validates against the action's schema: refused with the field's path, nothing stored", async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    expect((await env.http.post('/audit_logs/actions/user.signed_in/schemas', teamSchema)).status).toBe(201);

    expect((await env.http.post('/audit_logs/events', { organization_id: org, event: event() })).status).toBe(200);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ targets: [{ id: 'inv_1', type: 'invoice' }] }, '/targets/0/type', 'not_allowed'],
      [
        { targets: [{ id: 't', type: 'team', metadata: { seats: 'four' } }] },
        '/targets/0/metadata/seats',
        'invalid_type',
      ],
      [{ actor: { id: 'u', type: 'user', metadata: { role: 7 } } }, '/actor/metadata/role', 'invalid_type'],
      [{ metadata: { owner: 'u' } }, '/metadata/paid', 'required'],
      [{ metadata: { owner: 'u', paid: false, extra: 'x' } }, '/metadata/extra', 'not_allowed'],
      [{ targets: [] }, '/targets', 'required'],
      [{ version: 2 }, '/version', 'unknown_version'],
    ];
    for (const [overrides, field, code] of cases) {
      const res = await env.http.post('/audit_logs/events', { organization_id: org, event: event(overrides) });
      expect(res.status, field).toBe(400);
      expect(res.body).toEqual({
        code: 'invalid_audit_log_event',
        message: 'Invalid Audit Log event.',
        errors: expect.arrayContaining([expect.objectContaining({ field, code })]),
      });
    }
    expect(await storedEvents(env)).toHaveLength(1);

    // Version 2 of the schema: events naming it are held to it, version 1 still to version 1.
    const v2 = await env.http.post('/audit_logs/actions/user.signed_in/schemas', { targets: [{ type: 'invoice' }] });
    expect(v2.body.version).toBe(2);
    const invoice = { targets: [{ id: 'inv_1', type: 'invoice' }], version: 2 };
    expect((await env.http.post('/audit_logs/events', { organization_id: org, event: event(invoice) })).status).toBe(
      200,
    );
    expect((await env.http.post('/audit_logs/events', { organization_id: org, event: event() })).status).toBe(200);
    expect((await storedEvents(env)).map((e) => e.version).sort()).toEqual([1, 1, 2]);
  });
});

describe('schemas and actions', () => {
  it('creates versions 1, 2, 3 of an action and lists them and the actions, as upstream shapes them', async () => {
    const env = await newEnvironment();
    const v1 = await env.http.post('/audit_logs/actions/user.signed_in/schemas', teamSchema);
    expect(v1.status).toBe(201);
    expect(v1.body).toEqual({
      object: 'audit_log_schema',
      version: 1,
      actor: teamSchema.actor,
      targets: teamSchema.targets,
      metadata: teamSchema.metadata,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // Absent parts stay absent (never null).
    const v2 = await env.http.post('/audit_logs/actions/user.signed_in/schemas', { targets: [{ type: 'team' }] });
    expect(v2.body).toEqual({
      object: 'audit_log_schema',
      version: 2,
      targets: [{ type: 'team' }],
      created_at: expect.any(String),
    });
    const v3 = await env.http.post('/audit_logs/actions/user.signed_in/schemas', { targets: [{ type: 'x' }] });
    expect(v3.body.version).toBe(3);
    await env.http.post('/audit_logs/actions/invoice.paid/schemas', { targets: [{ type: 'invoice' }] });

    const schemas = await env.http.get('/audit_logs/actions/user.signed_in/schemas?order=asc&limit=2');
    expect(schemas.status).toBe(200);
    expect(schemas.body.data.map((s: { version: number }) => s.version)).toEqual([1, 2]);
    expect(schemas.body.list_metadata).toEqual({ before: null, after: expect.stringMatching(/^als_/) });
    const next = await env.http.get(
      `/audit_logs/actions/user.signed_in/schemas?order=asc&after=${schemas.body.list_metadata.after}`,
    );
    expect(next.body.data.map((s: { version: number }) => s.version)).toEqual([3]);

    const actions = await env.http.get('/audit_logs/actions');
    expect(actions.status).toBe(200);
    expect(actions.body).toEqual({
      object: 'list',
      data: [
        {
          object: 'audit_log_action',
          name: 'invoice.paid',
          schema: expect.objectContaining({ version: 1 }),
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        {
          object: 'audit_log_action',
          name: 'user.signed_in',
          schema: v3.body,
          created_at: v1.body.created_at,
          updated_at: expect.any(String),
        },
      ],
      list_metadata: { before: null, after: null },
    });
  });

  it('is 404 listing the schemas of an action without any, and keeps actions to their environment', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    await other.http.post('/audit_logs/actions/theirs.only/schemas', { targets: [{ type: 't' }] });
    const res = await env.http.get('/audit_logs/actions/theirs.only/schemas');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('entity_not_found');
    expect((await env.http.get('/audit_logs/actions')).body.data).toEqual([]);
  });

  describe.each([
    ['no targets', {}, 'targets'],
    ['an empty target type', { targets: [{ type: '' }] }, 'targets.0.type'],
    [
      'a property type upstream does not have',
      { targets: [{ type: 't' }], metadata: { type: 'object', properties: { a: { type: 'date' } } } },
      'metadata.properties.a.type',
    ],
  ])('refuses a schema with %s', (_label, body, field) => {
    it('answers 422 naming the field and stores nothing', async () => {
      const env = await newEnvironment();
      const res = await env.http.post('/audit_logs/actions/user.signed_in/schemas', body);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await storedSchemas(env)).toEqual([]);
      const actions = await env.deps.db
        .select()
        .from(auditLogActions)
        .where(eq(auditLogActions.environmentId, env.environmentId));
      expect(actions).toEqual([]);
    });
  });
});

describe('retention and configuration', () => {
  it('reads 365 days by default, sets upstream and SDK values, refuses others', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const path = `/organizations/${org}/audit_logs_retention`;
    expect((await env.http.get(path)).body).toEqual({ retention_period_in_days: 365 });
    const set = await env.http.put(path, { retention_period_in_days: 30 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ retention_period_in_days: 30 });
    expect((await env.http.put(path, { retention_period: '3_YEARS' })).body).toEqual({
      retention_period_in_days: 1095,
    });
    expect((await env.http.get(path)).body).toEqual({ retention_period_in_days: 1095 });
    for (const bad of [
      { retention_period_in_days: 31 },
      { retention_period_in_days: 3651 },
      { retention_period: '12_MONTHS' },
      {},
      { retention_period_in_days: '30' },
    ]) {
      const res = await env.http.put(path, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await env.http.get(path)).body).toEqual({ retention_period_in_days: 1095 });

    const config = await env.http.get(`/organizations/${org}/audit_log_configuration`);
    expect(config.status).toBe(200);
    expect(config.body).toEqual({ organization_id: org, retention_period_in_days: 1095, state: 'active' });
  });

  it('refuses an event older than a shortened retention', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    await env.http.put(`/organizations/${org}/audit_logs_retention`, { retention_period_in_days: 30 });
    const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
    const res = await env.http.post('/audit_logs/events', { organization_id: org, event: event({ occurred_at: old }) });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ field: 'event.occurred_at', code: 'occurred_at_outside_retention' });
    expect(await storedEvents(env)).toEqual([]);
  });

  it("is 404 for another environment's organization on every route", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreign = await organization(other);
    for (const res of [
      await env.http.get(`/organizations/${foreign}/audit_logs_retention`),
      await env.http.put(`/organizations/${foreign}/audit_logs_retention`, { retention_period_in_days: 30 }),
      await env.http.get(`/organizations/${foreign}/audit_log_configuration`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'entity_not_found', message: `Organization not found: '${foreign}'.` });
    }
    expect((await other.http.get(`/organizations/${foreign}/audit_logs_retention`)).body).toEqual({
      retention_period_in_days: 365,
    });
  });
});
