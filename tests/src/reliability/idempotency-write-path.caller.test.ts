import { randomUUID } from 'node:crypto';
import { auditLogEvents, events } from '@atrium/db';
import { contractError, createCaller, createInnerContext, type Deps } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyRow } from '../helpers/store.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';

type Db = Deps['db'];

/**
 * The worker's database, counting the transactions opened on it; with `lostAfterWrite`, a
 * one-statement write commits and then its connection dies before the answer (as a crash would).
 */
function watched(db: Db, lostAfterWrite = false) {
  const seen = { transactions: 0 };
  const handle = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'transaction') {
        return (...args: Parameters<Db['transaction']>) => {
          seen.transactions++;
          return target.transaction(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      if (prop !== '$client' || !lostAfterWrite) return value;
      return new Proxy(value as object, {
        get(client, name) {
          const method = Reflect.get(client, name);
          if ((name !== 'unsafe' && name !== 'query') || typeof method !== 'function') return method;
          return async (...args: unknown[]) => {
            await method.apply(client, args);
            throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
          };
        },
      });
    },
  });
  return { db: handle, seen };
}

function callerWith(env: TestEnvironment, db: Db, key?: string) {
  return createCaller(createInnerContext({ ...env.deps, db }, `Bearer ${env.apiKey}`, undefined, key));
}

describe('one write path with or without an Idempotency-Key', () => {
  it('creates an organization in the one statement, key or not, and stores the answer', async () => {
    const env = await newEnvironment();
    for (const key of [undefined, randomUUID()]) {
      const { db, seen } = watched(env.deps.db);
      const created = await callerWith(env, db, key).organizations.create({ name: `One path ${key ?? 'plain'}` });
      expect(seen.transactions).toBe(0);
      if (key) {
        const row = await idempotencyKeyRow(env, key);
        expect(row).toMatchObject({ state: 'completed', responseStatus: 201 });
        expect(JSON.parse(row?.responseBody ?? '')).toEqual(created);
      }
    }
    expect((await snapshot(env)).organizations).toBe(2);
  });

  it('creates a domain in the one statement with a key too', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Domains' });
    const key = randomUUID();
    const { db, seen } = watched(env.deps.db);
    const domain = await callerWith(env, db, key).organizationDomains.create({
      organization_id: org.id,
      domain: uniqueDomain(),
    });
    expect(seen.transactions).toBe(0);
    expect(await idempotencyKeyRow(env, key)).toMatchObject({ state: 'completed', responseStatus: 201 });
    expect(JSON.parse((await idempotencyKeyRow(env, key))?.responseBody ?? '')).toEqual(domain);
  });

  it('marks the key committed in the same statement as the write, so a lost answer is never run again', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const { db } = watched(env.deps.db, true);
    const lost = await callerWith(env, db, key)
      .organizations.create({ name: 'Committed once' })
      .catch((error: unknown) => error);
    expect(contractError(lost).status).toBe(503);
    // The 503 frees only a key still in flight: this one's write committed with its mark.
    expect(await idempotencyKeyRow(env, key)).toMatchObject({ state: 'committed', responseStatus: null });
    const written = await env.deps.db.select().from(events).where(eq(events.environmentId, env.environmentId));
    expect(written.map((e) => e.event)).toEqual(['organization.created']);
    expect((await snapshot(env)).organizations).toBe(1);
  });

  it('marks the key committed in the statement that records an audit log event, so a lost answer never records it twice', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Audited' });
    const key = randomUUID();
    const input = {
      organization_id: org.id,
      event: {
        action: 'user.signed_in',
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        actor: { id: 'user_1', type: 'user' },
        targets: [{ id: 'team_1', type: 'team' }],
        context: { location: '203.0.113.7' },
      },
    };
    const { db } = watched(env.deps.db, true);
    const lost = await callerWith(env, db, key)
      .auditLogs.events.create(input)
      .catch((error: unknown) => error);
    expect(contractError(lost).status).toBe(503);
    expect(await idempotencyKeyRow(env, key)).toMatchObject({ state: 'committed', responseStatus: null });
    // The SDK's retry with the same key is refused, not run again: the event stays recorded once.
    const retried = await callerWith(env, env.deps.db, key)
      .auditLogs.events.create(input)
      .catch((error: unknown) => error);
    expect(contractError(retried).status).toBe(409);
    const stored = await env.deps.db
      .select()
      .from(auditLogEvents)
      .where(eq(auditLogEvents.environmentId, env.environmentId));
    expect(stored).toHaveLength(1);
  });

  it('does not mark the key when the statement wrote nothing, so a 5xx frees it for a retry', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const { db } = watched(env.deps.db, true);
    const input = { organization_id: 'org_01HE8GSH8FQPASKSY27THRKRBP', domain: uniqueDomain() };
    const lost = await callerWith(env, db, key)
      .organizationDomains.create(input)
      .catch((error: unknown) => error);
    expect(contractError(lost).status).toBe(503);
    expect(await idempotencyKeyRow(env, key)).toBeUndefined();
    // The retry runs: the statement writes nothing, the transaction answers 404, and that is stored.
    const missing = await callerWith(env, env.deps.db, key)
      .organizationDomains.create(input)
      .catch((error: unknown) => error);
    expect(contractError(missing)).toMatchObject({ status: 404, body: { code: 'entity_not_found' } });
    expect(await idempotencyKeyRow(env, key)).toMatchObject({ state: 'completed', responseStatus: 404 });
    expect((await snapshot(env)).organization_domains).toBe(0);
  });
});
