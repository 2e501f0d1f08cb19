import type { Db } from '@atrium/db';
import { agentRegistrations, connections, events, webhookDeliveries } from '@atrium/db';
import { contractError, createConnection, fanOutEvents, registerAgent, scopeOf } from '@atrium/routers';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * Races pinned to one interleaving, where the 50-request races of races.http.test.ts hit the
 * window only by chance. A second connection acts at the exact point between two statements
 * of a write: PostgreSQL only (PGlite has one connection, the second would wait on the first).
 */
const onPostgres = Boolean(inject('databaseUrl'));

/**
 * Wraps a query builder so that, once its result is in, `after` runs before the caller sees it.
 * Chained calls (`.from()`, `.where()`, `.for()`) keep the wrapper.
 */
function afterResult<T extends object>(builder: T, after: () => Promise<void>): T {
  return new Proxy(builder, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === 'then') {
        return (resolve: (v: unknown) => unknown, reject: (e: unknown) => unknown) =>
          (target as unknown as Promise<unknown>)
            .then(async (rows) => {
              await after();
              return rows;
            })
            .then(resolve, reject);
      }
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out && typeof out === 'object' && 'then' in out ? afterResult(out, after) : out;
      };
    },
  });
}

/** Runs `act` on another connection and waits (bounded) until it is done or waits for a lock. */
async function actMeanwhile(
  env: TestEnvironment,
  act: () => Promise<unknown>,
  statement: string,
): Promise<{ acting: Promise<unknown> }> {
  let done = false;
  const acting = act().finally(() => {
    done = true;
  });
  for (let i = 0; i < 500 && !done; i++) {
    const [row] = await env.deps.db
      .select({ n: sql<number>`count(*)::int` })
      .from(sql`pg_stat_activity`)
      .where(sql`wait_event_type = 'Lock' and query ilike ${`${statement}%`}`);
    if ((row?.n ?? 0) > 0) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Wrapped: awaiting this function must not await the act itself (it may wait for the caller).
  return { acting };
}

/**
 * A database whose transactions run `act` (on another connection) right after their first
 * select: the point between a service's existence check and its insert.
 */
function pausingDb(env: TestEnvironment, act: () => Promise<void>): Db {
  const db = env.deps.db;
  return new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== 'transaction') return value;
      return (fn: (tx: Db) => Promise<unknown>, ...rest: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>).call(
          target,
          (tx: Db) => {
            let fired = false;
            const hooked = new Proxy(tx, {
              get(t, k, r) {
                const v = Reflect.get(t, k, r);
                if (k !== 'select' || fired) return v;
                return (...args: unknown[]) => {
                  fired = true;
                  return afterResult((v as (...a: unknown[]) => object).apply(t, args), act);
                };
              },
            });
            return fn(hooked);
          },
          ...rest,
        );
    },
  });
}

describe.skipIf(!onPostgres)('pinned interleavings (PostgreSQL only: they need a second connection)', () => {
  it('a webhook endpoint deleted during the fan-out of an event neither fails the fan-out nor leaves a delivery', async () => {
    const env = await newEnvironment();
    const endpoint = await env.http.post('/webhook_endpoints', {
      endpoint_url: 'https://hooks.example.com/doomed',
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    const created = await env.http.post('/organizations', { name: 'X' });
    expect(created.status).toBe(201);
    let deletion: Promise<unknown> | undefined;
    // The fan-out's first select reads (and KEY SHARE locks) the endpoints to deliver to; the
    // endpoint is deleted on another connection right then: the deletion waits for the fan-out,
    // whose deliveries then go with the endpoint.
    const db = pausingDb(env, async () => {
      deletion = (
        await actMeanwhile(
          env,
          () => env.http.delete(`/webhook_endpoints/${endpoint.body.id}`),
          'delete from "webhook_endpoints"',
        )
      ).acting;
    });
    const step = await fanOutEvents(db, new Date(), 10, { perEnvironment: 10, environments: [env.environmentId] });
    expect(step).toMatchObject({ events: 1, deliveries: 1 });

    const res = (await deletion) as { status: number };
    expect(res.status).toBe(204);
    const [event] = await env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization.created')));
    expect(event).toMatchObject({ fanoutPending: false, organizationId: created.body.id });
    // The delivery to the deleted endpoint went with it.
    expect(
      await env.deps.db
        .select()
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.environmentId, env.environmentId),
            eq(webhookDeliveries.endpointId, endpoint.body.id),
          ),
        ),
    ).toEqual([]);
  });
  it.each([
    ['a connection', 'connection'],
    ['an agent registration', 'agent'],
  ] as const)(
    '%s created while its organization is deleted answers 404 or goes with it, never a 409',
    async (_l, kind) => {
      const env = await newEnvironment();
      const organizationId = (await env.http.post('/organizations', { name: 'Doomed' })).body.id as string;
      let deletion: Promise<unknown> | undefined;
      const db = pausingDb(env, async () => {
        const meanwhile = await actMeanwhile(
          env,
          () => env.http.delete(`/organizations/${organizationId}`),
          'delete from "organizations"',
        );
        deletion = meanwhile.acting;
      });
      const scope = { ...(await scopeOf(env.deps, env.environmentId)), db };
      const outcome = await (kind === 'connection'
        ? createConnection(scope, {
            organization_id: organizationId,
            connection_type: 'OktaSAML',
            name: 'Late',
            state: 'active',
          })
        : registerAgent(scope, { organization_id: organizationId })
      ).then(
        () => 'created',
        (error: unknown) => contractError(error).status,
      );
      expect([(await deletion) as { status: number }].map((r) => r.status)).toEqual([204]);
      // Created before the delete (then cascaded with it) or refused as unknown: never a 409.
      expect(['created', 404]).toContain(outcome);
      const table = kind === 'connection' ? connections : agentRegistrations;
      const column = kind === 'connection' ? connections.organizationId : agentRegistrations.organizationId;
      expect(await env.deps.db.select().from(table).where(eq(column, organizationId))).toEqual([]);
    },
  );
});
