import { events, webhookDeliveries } from '@atrium/db';
import { recordEvent, scopeOf } from '@atrium/routers';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';

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

describe.skipIf(!onPostgres)('pinned interleavings (PostgreSQL only: they need a second connection)', () => {
  it('a webhook endpoint deleted between an event and its deliveries neither fails the write nor leaves a delivery', async () => {
    const env = await newEnvironment();
    const endpoint = await env.http.post('/webhook_endpoints', {
      endpoint_url: 'https://hooks.example.com/doomed',
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    const scope = await scopeOf(env.deps, env.environmentId);
    let deletion: Promise<unknown> | undefined;
    let deleted = false;

    const eventId = await env.deps.db.transaction(async (tx) => {
      // recordEvent's one select (the endpoints to deliver to) is followed by the deletion of
      // the endpoint on another connection: it either completes (nothing held the endpoint) or
      // waits for this transaction (the endpoint is held until the deliveries are written).
      const hooked = new Proxy(tx, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key !== 'select') return value;
          return (...args: unknown[]) =>
            afterResult((value as (...a: unknown[]) => object).apply(target, args), async () => {
              deletion = env.http.delete(`/webhook_endpoints/${endpoint.body.id}`).then((res) => {
                deleted = true;
                return res;
              });
              // Bounded poll: until the deletion is done, or is waiting for a lock.
              for (let i = 0; i < 500 && !deleted; i++) {
                const [row] = await env.deps.db
                  .select({ n: sql<number>`count(*)::int` })
                  .from(sql`pg_stat_activity`)
                  .where(sql`wait_event_type = 'Lock' and query ilike 'delete from "webhook_endpoints"%'`);
                if ((row?.n ?? 0) > 0) break;
                await new Promise((resolve) => setImmediate(resolve));
              }
            });
        },
      });
      return recordEvent(hooked as typeof tx, scope, 'organization.created', { id: 'org_x', name: 'X' });
    });

    const res = (await deletion) as { status: number };
    expect(res.status).toBe(204);
    const [event] = await env.deps.db.select().from(events).where(eq(events.id, eventId));
    expect(event?.event).toBe('organization.created');
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
});
