import { builtOnce, type Db, samlAssertionIds } from '@atrium/db';
import { and, eq, lt, sql } from 'drizzle-orm';

/**
 * Remembers an accepted assertion id until `expiresAt` (its NotOnOrAfter plus the clock skew), in
 * one statement. Insert-or-conflict is the replay check: true when the id is new, false when this
 * connection has accepted it already (a replay). An expired entry left behind by the retention
 * sweep does not count: it is overwritten, since the assertion it guarded can no longer pass the
 * time checks. Two POSTs of one assertion at once: the second waits for the first, then finds it.
 */
export async function rememberAssertionId(
  db: Db,
  entry: { environmentId: string; connectionId: string; assertionId: string; expiresAt: Date },
  now: Date,
): Promise<boolean> {
  const inserted = await rememberStatement(db, { ...entry, now: now.toISOString() });
  return inserted.length === 1;
}
/** Built once (`builtOnce`): every ACS POST runs it, in its sign-in's transaction. */
const rememberStatement = builtOnce(
  ['environmentId', 'connectionId', 'assertionId', 'expiresAt', 'now'] as const,
  (db, v) =>
    db
      .insert(samlAssertionIds)
      .values({
        environmentId: v.environmentId as never,
        connectionId: v.connectionId as never,
        assertionId: v.assertionId as never,
        expiresAt: v.expiresAt as never,
      })
      .onConflictDoUpdate({
        target: [samlAssertionIds.connectionId, samlAssertionIds.assertionId],
        set: { environmentId: sql`excluded.environment_id`, expiresAt: sql`excluded.expires_at` },
        setWhere: lt(samlAssertionIds.expiresAt, sql`${v.now}::timestamptz`),
      })
      .returning({ assertionId: samlAssertionIds.assertionId }),
);

/** Whether the connection has remembered this assertion id (tests and diagnostics). */
export async function hasAssertionId(db: Db, connectionId: string, assertionId: string): Promise<boolean> {
  const rows = await db
    .select({ assertionId: samlAssertionIds.assertionId })
    .from(samlAssertionIds)
    .where(and(eq(samlAssertionIds.connectionId, connectionId), eq(samlAssertionIds.assertionId, assertionId)))
    .limit(1);
  return rows.length === 1;
}
