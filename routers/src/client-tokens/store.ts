import { type Db, organizations, perHandle, sessions } from '@atrium/db';
import { and, eq, lt, sql } from 'drizzle-orm';

/**
 * Deletes up to `batchSize` sessions expired before `cutoff`, revoked ones included (a revoked
 * session keeps its `expires_at`, so it goes 7 days after it would have expired); how many went. As the events purge:
 * ids as an array (primary-key lookups under a generic plan), in a transaction (its own connection).
 */
export async function purgeSessionsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const expired = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(lt(sessions.expiresAt, cutoff))
    .orderBy(sessions.expiresAt)
    .limit(batchSize);
  const deleted = await db.transaction((tx) =>
    tx.delete(sessions).where(sql`${sessions.id} = any(array(${expired}))`).returning({ id: sessions.id }),
  );
  return deleted.length;
}

/** Whether the organization is still in the environment (a user-less widget token's check on every use). */
const organizationExistsRead = perHandle((db: Db) =>
  db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, sql.placeholder('org')), eq(organizations.environmentId, sql.placeholder('env'))))
    .limit(1)
    .prepare('widget_organization_exists'),
);

export async function organizationExists(db: Db, environmentId: string, organizationId: string): Promise<boolean> {
  const rows = await organizationExistsRead(db).execute({ env: environmentId, org: organizationId });
  return rows.length > 0;
}
