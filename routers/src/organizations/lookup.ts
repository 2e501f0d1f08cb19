import { type Db, organizations } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';

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
  lock?: 'key share' | 'share' | 'no key update' | 'update',
): Promise<{ id: string; name: string }> {
  const query = db
    .select({ id: organizations.id, name: organizations.name })
    .from(organizations)
    .where(and(eq(organizations.environmentId, scope.env.id), eq(organizations.id, id)))
    .limit(1);
  const [row] = lock ? await query.for(lock) : await query;
  if (!row) throw notFound('organization', id);
  return row;
}
