import { randomUUID } from 'node:crypto';
import { events, organizations } from '@atrium/db';
import { beginIdempotentRequest, contractError, createOrganization, scopeOf } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { statementsOf } from '../helpers/statements.ts';
import { idempotencyKeyRow } from '../helpers/store.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

// The worker's database is built (and migrated) under the hook's timeout, not the first test's.
beforeAll(() => getWorld());

/**
 * Group commit of `POST /organizations` without domain data (issue #35): creates sent while one
 * is being written go as one statement (events/store.ts `writeManyWithEvents`), and each caller
 * still gets its own answer.
 */

/** The batch's statement, by its text. */
const isBatch = (text: string) => /jsonb_to_recordset[\s\S]*insert into "organizations"/.test(text);

const storedOrganizations = (env: TestEnvironment) =>
  env.deps.db.select().from(organizations).where(eq(organizations.environmentId, env.environmentId));

const createdEvents = (env: TestEnvironment) =>
  env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization.created')));

/** Each outcome as the caller would see it on the wire: 201, or the contract's status and code. */
const outcomes = (settled: PromiseSettledResult<unknown>[]) =>
  settled.map((s) => {
    if (s.status === 'fulfilled') return { status: 201 };
    const { status, body } = contractError(s.reason);
    return { status, code: body.code };
  });

describe('group commit of organization creates', () => {
  it('stores 30 concurrent creates, each with one event, in fewer statements than creates', async () => {
    const env = await newEnvironment();
    const names = Array.from({ length: 30 }, (_, i) => `Burst ${i}`);
    const { result, statements } = await statementsOf(env.deps.db, () =>
      Promise.all(names.map((name, i) => env.caller.organizations.create({ name, metadata: { n: String(i) } }))),
    );
    expect(result.map((o) => o.name)).toEqual(names);
    expect(result.map((o) => o.metadata)).toEqual(names.map((_, i) => ({ n: String(i) })));
    expect(statements.length).toBeLessThan(30);
    expect(statements.some(isBatch)).toBe(true);
    const stored = await storedOrganizations(env);
    expect(stored.map((row) => row.id).sort()).toEqual(result.map((o) => o.id).sort());
    expect(stored.every((row) => row.allowProfilesOutsideOrganization === false && row.domainCount === 0)).toBe(true);
    const recorded = await createdEvents(env);
    expect(recorded.map((row) => row.organizationId).sort()).toEqual(result.map((o) => o.id).sort());
    // Each event carries the answer its caller got.
    for (const organization of result) {
      expect(recorded.find((row) => row.organizationId === organization.id)?.data).toEqual(organization);
    }
  });

  it('a lone create is one statement, sent at once', async () => {
    const env = await newEnvironment();
    const { statements } = await statementsOf(env.deps.db, () => env.caller.organizations.create({ name: 'Alone' }));
    expect(statements.filter((text) => /insert into "organizations"/.test(text))).toHaveLength(1);
    expect(statements.some(isBatch)).toBe(false);
  });

  it('refuses only the conflicting create of a burst and stores the others', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'Holder', external_id: 'taken' });
    const create = (name: string, externalId?: string) =>
      env.caller.organizations.create({ name, ...(externalId === undefined ? {} : { external_id: externalId }) });
    const { result: settled, statements } = await statementsOf(env.deps.db, () =>
      Promise.allSettled([
        create('First'),
        create('Second', 'ext-2'),
        create('Duplicate', 'taken'),
        create('Third'),
        create('Fourth', 'ext-4'),
      ]),
    );
    expect(outcomes(settled)).toEqual([
      { status: 201 },
      { status: 201 },
      { status: 409, code: expect.any(String) },
      { status: 201 },
      { status: 201 },
    ]);
    expect(statements.some(isBatch)).toBe(true);
    const stored = await storedOrganizations(env);
    expect(stored.map((row) => row.name).sort()).toEqual(['First', 'Fourth', 'Holder', 'Second', 'Third']);
    expect(await createdEvents(env)).toHaveLength(5);
  });

  it('marks each Idempotency-Key committed with its own create, and replays retries within a burst', async () => {
    const env = await newEnvironment();
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const post = (i: number, key: string) =>
      env.http.post('/organizations', { name: `Keyed ${i}` }, { 'Idempotency-Key': key });
    const first = await Promise.all(keys.map((key, i) => post(i, key)));
    expect(first.map((res) => res.status)).toEqual(keys.map(() => 201));
    const states = await Promise.all(keys.map(async (key) => (await idempotencyKeyRow(env, key))?.state));
    expect(states).toEqual(keys.map(() => 'completed'));
    // A burst of the same retries and new creates: each retry answers as before and writes nothing.
    const fresh = Array.from({ length: 8 }, () => randomUUID());
    const second = await Promise.all([
      ...keys.map((key, i) => post(i, key)),
      ...fresh.map((key, i) => post(8 + i, key)),
    ]);
    expect(second.slice(0, 8).map((res) => res.body)).toEqual(first.map((res) => res.body));
    expect(second.map((res) => res.status)).toEqual([...keys, ...fresh].map(() => 201));
    const stored = await storedOrganizations(env);
    expect(stored).toHaveLength(16);
    expect(await createdEvents(env)).toHaveLength(16);
  });

  // Without a refusal the batch statement marks every key; with one the batch fails, and each
  // create is sent again alone and marks its own key.
  it.each([
    ['a batch', false],
    ['a failed batch retried alone', true],
  ])('marks the Idempotency-Key of each create it writes committed, and no other (%s)', async (_, refused) => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'Holder', external_id: 'taken' });
    const scope = await scopeOf(env.deps, env.environmentId);
    const keys = Array.from({ length: 12 }, () => randomUUID());
    for (const key of keys) {
      expect(await beginIdempotentRequest(env.deps, env.environmentId, key, 'fingerprint')).toEqual({
        kind: 'proceed',
      });
    }
    const { result: settled, statements } = await statementsOf(env.deps.db, () =>
      Promise.allSettled(
        keys.map((key, i) =>
          createOrganization(
            { ...scope, idempotency: { environmentId: env.environmentId, key } },
            { name: `Keyed ${i}`, ...(refused && i === 11 ? { external_id: 'taken' } : {}) },
          ),
        ),
      ),
    );
    expect(outcomes(settled).map((o) => o.status)).toEqual([...keys.slice(0, 11).map(() => 201), refused ? 409 : 201]);
    expect(statements.some(isBatch)).toBe(true);
    // The key of each written create is committed with it (a lost answer is then never run again);
    // the refused one's stays in flight, to be freed by its error.
    const states = await Promise.all(keys.map(async (key) => (await idempotencyKeyRow(env, key))?.state));
    expect(states).toEqual([...keys.slice(0, 11).map(() => 'committed'), refused ? 'in_flight' : 'committed']);
  });
});
