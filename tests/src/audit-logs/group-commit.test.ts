import { randomUUID } from 'node:crypto';
import { auditLogEvents } from '@atrium/db';
import { beginIdempotentRequest, contractError, createAuditLogEvent, type Scope, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { statementsOf } from '../helpers/statements.ts';
import { idempotencyKeyRow } from '../helpers/store.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

/**
 * Group commit of `POST /audit_logs/events` (issue #38): plain events sent while one is being
 * written go together as one INSERT, and each caller still gets its own answer.
 */

const storedEvents = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogEvents).where(eq(auditLogEvents.environmentId, env.environmentId));

async function organization(env: TestEnvironment): Promise<string> {
  const res = await env.http.post('/organizations', { name: 'Acme' });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A plain event (its action has no schema) whose actor id says which one it is. */
function event(actor: string, overrides: Record<string, unknown> = {}) {
  return {
    action: 'user.signed_in',
    occurred_at: new Date(Date.now() - 60_000).toISOString(),
    actor: { id: actor, type: 'user', name: 'Jon Smith', metadata: { role: 'admin' } },
    targets: [{ id: 'team_123', type: 'team', metadata: { seats: 4 } }],
    context: { location: '123.123.123.123', user_agent: 'Chrome/104.0.0.0' },
    ...overrides,
  };
}

/** The action `invoice.paid` gets a schema: events of it are checked the long way. */
const invoiceSchema = { targets: [{ type: 'invoice' }] };
const invoice = (actor: string, type: string) =>
  event(actor, { action: 'invoice.paid', targets: [{ id: 'inv_1', type }] });

/** The batch's statement (store.ts `insertPlainEvents`), by its text. */
const isBatch = (text: string) => /from unnest\([\s\S]*insert into "audit_log_events"/.test(text);

/** Each outcome as the caller would see it on the wire: 200, or the contract's status and code. */
const outcomes = (settled: PromiseSettledResult<unknown>[]) =>
  settled.map((s) => {
    if (s.status === 'fulfilled') return { status: 200 };
    const { status, body } = contractError(s.reason);
    return { status, code: body.code };
  });

describe('group commit of plain events', () => {
  it('writes 40 concurrent events, each once, in fewer statements than events', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const scope = await scopeOf(env.deps, env.environmentId);
    const actors = Array.from({ length: 40 }, (_, i) => `user_${i}`);
    const { result, statements } = await statementsOf(env.deps.db, () =>
      Promise.all(actors.map((a) => createAuditLogEvent(scope, { organization_id: org, event: event(a) }))),
    );
    expect(result).toEqual(actors.map(() => ({ success: true })));
    const stored = await storedEvents(env);
    expect(stored.map((row) => row.actor.id).sort()).toEqual([...actors].sort());
    expect(new Set(stored.map((row) => row.id)).size).toBe(40);
    expect(stored.every((row) => row.organizationId === org && row.version === 1)).toBe(true);
    expect(statements.length).toBeLessThan(40);
    expect(statements.some(isBatch)).toBe(true);
  });

  it('a lone event is one statement, sent at once', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const scope = await scopeOf(env.deps, env.environmentId);
    const { result, statements } = await statementsOf(env.deps.db, () =>
      createAuditLogEvent(scope, { organization_id: org, event: event('alone') }),
    );
    expect(result).toEqual({ success: true });
    expect(statements).toHaveLength(1);
    expect(statements.some(isBatch)).toBe(false);
    expect((await storedEvents(env)).map((row) => row.actor.id)).toEqual(['alone']);
  });

  it('gives each event of a mixed batch its own answer and stores only the valid ones', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    expect((await env.http.post('/audit_logs/actions/invoice.paid/schemas', invoiceSchema)).status).toBe(201);
    const scope: Scope = await scopeOf(env.deps, env.environmentId);
    const create = (e: ReturnType<typeof event>, organizationId = org) =>
      createAuditLogEvent(scope, { organization_id: organizationId, event: e });
    const hourAhead = new Date(Date.now() + 3_600_000).toISOString();
    // The first call goes alone; the others arrive while it is in flight and go as one batch.
    const { result: settled, statements } = await statementsOf(env.deps.db, () =>
      Promise.allSettled([
        create(event('first')),
        create(event('plain_1')),
        create(invoice('schema_valid', 'invoice')),
        create(invoice('schema_invalid', 'team')),
        create(event('unknown_org'), 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ'),
        create(event('future', { occurred_at: hourAhead })),
        // The service is called without the input schema here, so the database refuses the
        // NUL itself: the batch fails and each of its events is written again alone.
        create(event('nul\u0000')),
        create(event('plain_2')),
      ]),
    );
    expect(outcomes(settled)).toEqual([
      { status: 200 },
      { status: 200 },
      { status: 200 },
      { status: 400, code: 'invalid_audit_log_event' },
      { status: 404, code: 'entity_not_found' },
      { status: 422, code: 'invalid_request_parameters' },
      { status: 422, code: 'invalid_request_parameters' },
      { status: 200 },
    ]);
    expect(statements.some(isBatch)).toBe(true);
    const stored = await storedEvents(env);
    expect(stored.map((row) => row.actor.id).sort()).toEqual(['first', 'plain_1', 'plain_2', 'schema_valid']);
  });

  it('marks the Idempotency-Key of each event it writes committed in the same statement, and no other', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const scope = await scopeOf(env.deps, env.environmentId);
    const keys = Array.from({ length: 12 }, () => randomUUID());
    for (const key of keys) {
      expect(await beginIdempotentRequest(env.deps, env.environmentId, key, 'fingerprint')).toEqual({
        kind: 'proceed',
      });
    }
    const unknownOrg = 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ';
    const { result: settled, statements } = await statementsOf(env.deps.db, () =>
      Promise.allSettled(
        keys.map((key, i) =>
          createAuditLogEvent(
            { ...scope, idempotency: { environmentId: env.environmentId, key } },
            { organization_id: i === 11 ? unknownOrg : org, event: event(`user_${i}`) },
          ),
        ),
      ),
    );
    expect(outcomes(settled).map((o) => o.status)).toEqual([...keys.slice(0, 11).map(() => 200), 404]);
    expect(statements.some(isBatch)).toBe(true);
    // The key of each written event is committed with it (a lost answer is then never run again);
    // the refused one's stays in flight, to be freed by its error.
    const states = await Promise.all(keys.map(async (key) => (await idempotencyKeyRow(env, key))?.state));
    expect(states).toEqual([...keys.slice(0, 11).map(() => 'committed'), 'in_flight']);
    expect(await storedEvents(env)).toHaveLength(11);
  });

  it('over HTTP: concurrent posts of a mixed set each answer their own status, a NUL refused by the schema', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    expect((await env.http.post('/audit_logs/actions/invoice.paid/schemas', invoiceSchema)).status).toBe(201);
    const post = (e: ReturnType<typeof event>, organizationId = org) =>
      env.http.post('/audit_logs/events', { organization_id: organizationId, event: e });
    const sent = [
      ...Array.from({ length: 10 }, (_, i) => [post(event(`plain_${i}`)), 200, undefined] as const),
      [post(invoice('schema_valid', 'invoice')), 200, undefined],
      [post(invoice('schema_invalid', 'team')), 400, undefined],
      [post(event('unknown_org'), 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ'), 404, undefined],
      [
        post(event('future', { occurred_at: new Date(Date.now() + 3_600_000).toISOString() })),
        422,
        'event.occurred_at',
      ],
      [post(event('nul\u0000')), 422, 'event.actor.id'],
      [post(event('meta', { metadata: { note: 'a\u0000b' } })), 422, 'event.metadata.note'],
      [post(event('surrogate', { context: { location: 'x\ud800' } })), 422, 'event.context.location'],
    ] as const;
    const responses = await Promise.all(sent.map(([res]) => res));
    responses.forEach((res, i) => {
      const [, status, field] = sent[i] ?? [];
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    });
    expect(responses[14]?.body.errors[0].code).toBe('event.actor.id_invalid');
    const stored = await storedEvents(env);
    expect(stored.map((row) => row.actor.id).sort()).toEqual(
      [...Array.from({ length: 10 }, (_, i) => `plain_${i}`), 'schema_valid'].sort(),
    );
  });
});
