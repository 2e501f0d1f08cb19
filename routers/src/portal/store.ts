import { type Db, type PortalIntent, portalLinks, portalSessions } from '@atrium/db';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { purgeExpired } from '../common/store.ts';
import { environmentInfoColumns, joinedEnvironment } from '../environments/store.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { organizationNames } from '../organizations/store.ts';

export type PortalLinkRow = typeof portalLinks.$inferSelect;
export type PortalSessionRow = typeof portalSessions.$inferSelect;

export async function insertPortalLink(db: Db, row: typeof portalLinks.$inferInsert): Promise<void> {
  await db.insert(portalLinks).values(row);
}

/**
 * Marks the unused, unexpired link with this secret hash used, in one statement (two tabs
 * opening it at once: one wins); the link, or undefined when no such link may be used.
 */
export async function consumePortalLink(db: Db, secretHash: string, now: Date): Promise<PortalLinkRow | undefined> {
  const [row] = await db
    .update(portalLinks)
    .set({ usedAt: now })
    .where(and(eq(portalLinks.secretHash, secretHash), isNull(portalLinks.usedAt), gt(portalLinks.expiresAt, now)))
    .returning();
  return row;
}

/** The link with this secret hash, used or not (to say why it was refused). */
export async function findPortalLink(db: Db, secretHash: string): Promise<PortalLinkRow | undefined> {
  const [row] = await db.select().from(portalLinks).where(eq(portalLinks.secretHash, secretHash)).limit(1);
  return row;
}

export async function insertPortalSession(db: Db, row: typeof portalSessions.$inferInsert): Promise<void> {
  await db.insert(portalSessions).values(row);
}

/** A live portal session: its row, its environment and its organization's name. */
export interface LivePortalSession {
  session: PortalSessionRow;
  env: EnvironmentInfo;
  organizationName: string;
}

/**
 * The unexpired portal session `id`, with its environment and organization (an inner join: a
 * deleted organization's sessions are gone with it, and none is returned). Read on the primary.
 */
export async function livePortalSession(db: Db, id: string, now: Date): Promise<LivePortalSession | undefined> {
  const [row] = await db
    .select({
      session: portalSessions,
      env: environmentInfoColumns,
      organizationName: sql<string>`o.name`,
    })
    .from(portalSessions)
    .innerJoin(...joinedEnvironment(portalSessions.environmentId))
    .innerJoin(
      sql`${organizationNames} o`,
      sql`o.id = ${portalSessions.organizationId} and o.environment_id = ${portalSessions.environmentId}`,
    )
    .where(and(eq(portalSessions.id, id), gt(portalSessions.expiresAt, now)))
    .limit(1);
  return row;
}

export type { PortalIntent };

/** Deletes at most `batchSize` portal links expired before `cutoff` (the retention sweep, common/store.ts `purgeExpired`); how many went. */
export function purgeExpiredPortalLinks(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeExpired(db, portalLinks, cutoff, batchSize);
}

/** Deletes at most `batchSize` portal sessions expired before `cutoff` (the retention sweep, common/store.ts `purgeExpired`); how many went. */
export function purgeExpiredPortalSessions(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return purgeExpired(db, portalSessions, cutoff, batchSize);
}
