// What other resources do when an environment is created. Those resources read environments
// (environments/store.ts), so this folder cannot import them back (no folder cycle): they register
// here once, at composition (app-router.ts).
import type { Db } from '@atrium/db';
import { reactions } from '../kernel/reactions.ts';

/** A reaction to an environment's creation, in the caller's transaction (its rows exist already). */
export type EnvironmentCreated = (tx: Db, environmentId: string, now: Date) => Promise<void>;

const created = reactions<Parameters<EnvironmentCreated>>('an environment creation');

/** Registers a reaction to an environment's creation; registering the same function again does nothing. */
export const onEnvironmentCreated: (reaction: EnvironmentCreated) => void = created.on;

/** Runs every registered reaction (none registered: an environment without its default roles would refuse every membership). */
export async function environmentCreated(tx: Db, environmentId: string, now: Date): Promise<void> {
  await created.run(tx, environmentId, now);
}
