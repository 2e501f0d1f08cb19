import type { Db } from '@atrium/db';
import type { RowLock } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { loadOrganization } from './store.ts';

/**
 * The organization a request names, in the caller's environment, or 404 — the one check every
 * resource that hangs off an organization makes. `lock` takes a row lock in the caller's
 * transaction: `key share` or `share` keep a concurrent delete out while children are written
 * (it waits, then cascades), `update` also serialises writers of the organization itself,
 * `no key update` serialises creates counted against an organization quota without blocking
 * the inserts of other children (their foreign keys take KEY SHARE).
 */
export async function requireOrganization(
  db: Db,
  scope: Scope,
  id: string,
  lock?: RowLock,
): Promise<{ id: string; name: string }> {
  const row = await loadOrganization(db, scope.env.id, id, lock);
  return { id: row.id, name: row.name };
}
