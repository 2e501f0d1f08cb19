import { auditLogStreams, type Db } from '@atrium/db';
import { and, eq } from 'drizzle-orm';

/**
 * Every query of a log stream's configuration (issue #38: the portal's `log_streams` page, the
 * AdminPortalAuditLogStreaming widget, the console). One row per organization (a unique index);
 * the delivery worker's own queries live beside it (delivery*.ts).
 */
export type AuditLogStreamRow = typeof auditLogStreams.$inferSelect;
export type NewAuditLogStream = typeof auditLogStreams.$inferInsert;

const ofOrganization = (environmentId: string, organizationId: string) =>
  and(eq(auditLogStreams.environmentId, environmentId), eq(auditLogStreams.organizationId, organizationId));

/** The organization's stream, or undefined. */
export async function findStreamOfOrganization(
  db: Db,
  environmentId: string,
  organizationId: string,
): Promise<AuditLogStreamRow | undefined> {
  const [row] = await db.select().from(auditLogStreams).where(ofOrganization(environmentId, organizationId)).limit(1);
  return row;
}

/** Creates the organization's stream; a concurrent create of the same organization loses on the unique index. */
export async function insertStream(db: Db, row: NewAuditLogStream): Promise<AuditLogStreamRow> {
  const [inserted] = await db.insert(auditLogStreams).values(row).returning();
  return inserted as AuditLogStreamRow;
}

/** Writes the given columns of the organization's stream; the row after, or undefined when it has none. */
export async function updateStreamOfOrganization(
  db: Db,
  environmentId: string,
  organizationId: string,
  set: Partial<Omit<NewAuditLogStream, 'id' | 'environmentId' | 'organizationId' | 'createdAt'>>,
): Promise<AuditLogStreamRow | undefined> {
  const [row] = await db
    .update(auditLogStreams)
    .set(set)
    .where(ofOrganization(environmentId, organizationId))
    .returning();
  return row;
}

/** Removes the organization's stream; whether there was one. */
export async function deleteStreamOfOrganization(db: Db, environmentId: string, organizationId: string) {
  const rows = await db
    .delete(auditLogStreams)
    .where(ofOrganization(environmentId, organizationId))
    .returning({ id: auditLogStreams.id });
  return rows.length > 0;
}
