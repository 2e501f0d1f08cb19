// What other resources do when an environment is created. Those resources read environments
// (environments/store.ts), so this folder cannot import them back (no folder cycle): they register
// here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';

/** A reaction to an environment's creation, in the caller's transaction (its rows exist already). */
export type EnvironmentCreated = (tx: Db, environmentId: string, now: Date) => Promise<void>;

const created: EnvironmentCreated[] = [];

/** Registers a reaction to an environment's creation; registering the same function again does nothing. */
export function onEnvironmentCreated(reaction: EnvironmentCreated): void {
  if (!created.includes(reaction)) created.push(reaction);
}

/**
 * Runs every registered reaction, in registration order. None registered is an error: an
 * environment made without its default roles would refuse every membership.
 */
export async function environmentCreated(tx: Db, environmentId: string, now: Date): Promise<void> {
  if (created.length === 0) throw new Error('no reaction to an environment creation is registered (app-router.ts)');
  for (const reaction of created) await reaction(tx, environmentId, now);
}
