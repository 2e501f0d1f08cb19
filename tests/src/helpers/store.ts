import { events, idempotencyKeys, organizationDomains, organizations } from '@atrium/db';
import { and, count, eq } from 'drizzle-orm';
import type { TestEnvironment } from './world.ts';

/** What an environment has stored, to assert that a refused request left nothing behind. */
export async function storedCounts(env: TestEnvironment) {
  const db = env.deps.db;
  const [orgs] = await db
    .select({ n: count() })
    .from(organizations)
    .where(eq(organizations.environmentId, env.environmentId));
  const [domains] = await db
    .select({ n: count() })
    .from(organizationDomains)
    .where(eq(organizationDomains.environmentId, env.environmentId));
  const [evts] = await db.select({ n: count() }).from(events).where(eq(events.environmentId, env.environmentId));
  return { organizations: orgs?.n ?? 0, domains: domains?.n ?? 0, events: evts?.n ?? 0 };
}

/** The stored row of an environment's Idempotency-Key, if any. */
export async function idempotencyKeyRow(env: TestEnvironment, key: string) {
  const [row] = await env.deps.db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.environmentId, env.environmentId), eq(idempotencyKeys.key, key)));
  return row;
}
