import { events } from '@atrium/db';
import { asc, eq } from 'drizzle-orm';
import type { TestEnvironment } from './world.ts';

/** Every stored event of a test environment, oldest first (straight from the table). */
export async function storedEvents(env: TestEnvironment) {
  return env.deps.db.select().from(events).where(eq(events.environmentId, env.environmentId)).orderBy(asc(events.id));
}

/** The names of the events stored since `after` (an index into storedEvents). */
export async function eventNamesSince(env: TestEnvironment, after: number): Promise<string[]> {
  return (await storedEvents(env)).slice(after).map((e) => e.event);
}

/** The data of every stored event named `name`, oldest first. */
export async function storedEventData(env: TestEnvironment, name: string): Promise<Array<Record<string, unknown>>> {
  return (await storedEvents(env)).filter((e) => e.event === name).map((e) => e.data as Record<string, unknown>);
}
