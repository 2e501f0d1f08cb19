import { events, newId } from '@atrium/db';
import { EVENT_RETENTION_MS, purgeExpiredEvents } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEvents } from './helpers/events.ts';
import { newEnvironment } from './helpers/world.ts';

describe('event retention', () => {
  it('keeps 30 days: older events are never listed and are purged', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'Recent' });
    const old = newId('event');
    await env.deps.db.insert(events).values({
      id: old,
      environmentId: env.environmentId,
      event: 'organization.created',
      data: { object: 'organization', id: 'org_old' },
      createdAt: new Date(Date.now() - EVENT_RETENTION_MS - 60_000),
    });
    const listed = await env.caller.events.list({ limit: 10, order: 'desc' });
    expect(listed.data.map((e) => e.id)).not.toContain(old);
    expect(listed.data).toHaveLength(1);

    expect(await purgeExpiredEvents(env.deps.db, new Date(), 1)).toBeGreaterThanOrEqual(1);
    expect(await env.deps.db.select().from(events).where(eq(events.id, old))).toEqual([]);
    expect(await storedEvents(env)).toHaveLength(1);
  });
});
