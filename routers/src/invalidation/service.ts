import type { Db } from '@atrium/db';
import type { Deps } from '../kernel/deps.ts';
import { notifyInvalidation } from './store.ts';

export { INVALIDATION_CHANNEL } from './store.ts';

/**
 * What a notification names: an environment whose API keys or flags changed, an environment
 * whose signing keys changed, a session that was revoked (for any per-process session cache), a
 * directory whose SCIM token stopped working or whose state changed, or an organization deleted
 * (auth/directory-token.ts caches SCIM tokens of both).
 */
export type InvalidationTopic = 'environment' | 'signing_keys' | 'session' | 'directory' | 'organization';
const TOPICS: readonly InvalidationTopic[] = ['environment', 'signing_keys', 'session', 'directory', 'organization'];

/**
 * Tells every process (this one included) to forget what it caches about `id`, through
 * PostgreSQL `NOTIFY` on `db`: pass the transaction that makes the change, so the message
 * leaves when it commits. On PGlite the same statement reaches this process's own listener.
 */
export function publishInvalidation(db: Db, topic: InvalidationTopic, id: string): Promise<void> {
  return notifyInvalidation(db, JSON.stringify({ topic, id }));
}

/** Runs `handler` for each notification of `topic` (e.g. a session cache forgetting a revoked session). */
export function onInvalidation(deps: Deps, topic: InvalidationTopic, handler: (id: string) => void): () => void {
  const handlers = deps.caches.invalidation.handlers;
  const set = handlers.get(topic) ?? new Set<(id: string) => void>();
  handlers.set(topic, set);
  set.add(handler);
  return () => set.delete(handler);
}

/**
 * This process forgets what it caches about `id` now (the handlers of `topic`), without waiting
 * for a notification; call it once the change committed.
 */
export function forgetLocally(deps: Deps, topic: InvalidationTopic, id: string): void {
  for (const handler of deps.caches.invalidation.handlers.get(topic) ?? []) handler(id);
}

/**
 * A notification arrived: the cache entries it names are dropped, and the epoch moves on, so
 * that a load that read the database before the change committed does not cache what it read.
 */
export function applyInvalidation(deps: Deps, payload: string): void {
  let message: { topic?: unknown; id?: unknown };
  try {
    message = JSON.parse(payload) as typeof message;
  } catch {
    deps.log.warn('invalidation: a notification that is not JSON was ignored');
    return;
  }
  const { topic, id } = message;
  if (typeof id !== 'string' || !TOPICS.includes(topic as InvalidationTopic)) return;
  deps.caches.invalidation.epoch += 1;
  forgetLocally(deps, topic as InvalidationTopic, id);
}

/**
 * The channel is heard again (first start or a reconnect): whatever was said while it was not
 * is lost, so every entry goes, and from now on entries live until a notification names them.
 */
export function invalidationUp(deps: Deps): void {
  const { invalidation } = deps.caches;
  invalidation.epoch += 1;
  for (const set of invalidation.handlers.values()) for (const handler of set) handler('*');
  invalidation.listening = true;
}

/** The channel dropped: entries fall back to their time bounds until it is heard again. */
export function invalidationDown(deps: Deps): void {
  deps.caches.invalidation.listening = false;
}
