import {
  type AuditLogExportFilters,
  auditLogEvents,
  auditLogExportParts,
  auditLogExports,
  countUpTo,
  type Db,
} from '@atrium/db';
import { and, asc, eq, gt, gte, lt, lte, or, type SQL, sql } from 'drizzle-orm';

export type AuditLogExportRow = typeof auditLogExports.$inferSelect;
export type AuditLogEventRow = typeof auditLogEvents.$inferSelect;

export async function insertAuditLogExport(
  db: Db,
  values: typeof auditLogExports.$inferInsert,
): Promise<AuditLogExportRow> {
  const [row] = await db.insert(auditLogExports).values(values).returning();
  return row as AuditLogExportRow;
}

/** How many of the organization's exports are pending, counted up to `limit`. */
export function countPendingExports(db: Db, environmentId: string, organizationId: string, limit: number) {
  const e = auditLogExports;
  const where = and(eq(e.environmentId, environmentId), eq(e.organizationId, organizationId), eq(e.state, 'pending'));
  return countUpTo(db, e, where, limit);
}

/** The export of the environment, or undefined. */
export async function findAuditLogExport(db: Db, environmentId: string, id: string) {
  const [row] = await db
    .select()
    .from(auditLogExports)
    .where(and(eq(auditLogExports.environmentId, environmentId), eq(auditLogExports.id, id)))
    .limit(1);
  return row;
}

/** The export by id alone (a signed download link names no environment; its signature is the credential). */
export async function findAuditLogExportById(db: Db, id: string) {
  const [row] = await db.select().from(auditLogExports).where(eq(auditLogExports.id, id)).limit(1);
  return row;
}

/**
 * Leases one pending export whose lease is free or past (`FOR UPDATE SKIP LOCKED`: two workers
 * never take the same one), counting the attempt; undefined when none is due.
 */
export async function leasePendingExport(db: Db, now: Date, leaseUntil: Date): Promise<AuditLogExportRow | undefined> {
  return db.transaction(async (tx) => {
    const [due] = await tx
      .select({ id: auditLogExports.id })
      .from(auditLogExports)
      .where(
        and(
          eq(auditLogExports.state, 'pending'),
          or(sql`${auditLogExports.leaseUntil} is null`, lte(auditLogExports.leaseUntil, now)),
        ),
      )
      .orderBy(asc(auditLogExports.id))
      .limit(1)
      .for('update', { skipLocked: true });
    if (!due) return undefined;
    const [row] = await tx
      .update(auditLogExports)
      .set({ leaseUntil: leaseUntil, attempts: sql`${auditLogExports.attempts} + 1`, updatedAt: now })
      .where(eq(auditLogExports.id, due.id))
      .returning();
    return row;
  });
}

/** The text of a JSON array (a filter list) for `jsonb_array_elements_text`, same on both drivers. */
const listOf = (values: string[]) => sql`(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;

/**
 * One keyset page of the events an export covers, in `(occurred_at, id)` order after `after`:
 * the organization's, in the range (both ends included), recorded at or before `snapshot`, and
 * matching each filter given (any of its values).
 */
export async function pageOfExportEvents(
  db: Db,
  row: AuditLogExportRow,
  snapshot: Date,
  after: { occurredAt: Date; id: string } | undefined,
  limit: number,
): Promise<AuditLogEventRow[]> {
  const e = auditLogEvents;
  const f: AuditLogExportFilters = row.filters;
  const conditions: Array<SQL | undefined> = [
    eq(e.environmentId, row.environmentId),
    eq(e.organizationId, row.organizationId),
    gte(e.occurredAt, row.rangeStart),
    lte(e.occurredAt, row.rangeEnd),
    lte(e.createdAt, snapshot),
  ];
  if (f.actions?.length) conditions.push(sql`${e.action} in ${listOf(f.actions)}`);
  if (f.actor_ids?.length) conditions.push(sql`${e.actor}->>'id' in ${listOf(f.actor_ids)}`);
  if (f.actor_names?.length) conditions.push(sql`${e.actor}->>'name' in ${listOf(f.actor_names)}`);
  if (f.targets?.length) {
    conditions.push(
      sql`exists (select 1 from jsonb_array_elements(${e.targets}) t where t->>'type' in ${listOf(f.targets)})`,
    );
  }
  if (after) {
    conditions.push(
      or(gt(e.occurredAt, after.occurredAt), and(eq(e.occurredAt, after.occurredAt), gt(e.id, after.id))),
    );
  }
  return db
    .select()
    .from(e)
    .where(and(...conditions))
    .orderBy(asc(e.occurredAt), asc(e.id))
    .limit(limit);
}

/**
 * Deletes up to `limit` finished exports (`ready` or `error`) last updated before `before`, by the
 * `audit_log_exports_finished_idx` index, with their parts (the foreign key's cascade, in the same
 * statement); how many exports went.
 */
export async function deleteFinishedExports(db: Db, before: Date, limit: number): Promise<number> {
  const e = auditLogExports;
  const expired = db
    .select({ id: e.id })
    .from(e)
    .where(and(sql`${e.state} <> 'pending'`, lt(e.updatedAt, before)))
    .orderBy(asc(e.updatedAt))
    .limit(limit);
  const deleted = await db.delete(e).where(sql`${e.id} = any(array(${expired}))`).returning({ id: e.id });
  return deleted.length;
}

/** Drops the parts an earlier attempt of the export left (a build that failed or lost its lease). */
export async function deleteExportParts(db: Db, exportId: string): Promise<void> {
  await db.delete(auditLogExportParts).where(eq(auditLogExportParts.exportId, exportId));
}

export async function insertExportPart(
  db: Db,
  row: AuditLogExportRow,
  attempt: number,
  seq: number,
  data: Buffer,
): Promise<void> {
  await db
    .insert(auditLogExportParts)
    .values({ exportId: row.id, environmentId: row.environmentId, attempt, seq, data });
}

/**
 * Marks the export `ready` with the parts of `attempt`, if that attempt still holds the lease
 * (a build that lost it changes nothing); drops the parts of every other attempt. True when marked.
 */
export async function markExportReady(
  db: Db,
  id: string,
  attempt: number,
  counts: { rows: number; bytes: number; parts: number },
  now: Date,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(auditLogExports)
      .set({
        state: 'ready',
        leaseUntil: null,
        readyAttempt: attempt,
        rowCount: counts.rows,
        byteCount: counts.bytes,
        partCount: counts.parts,
        updatedAt: now,
      })
      .where(
        and(eq(auditLogExports.id, id), eq(auditLogExports.attempts, attempt), eq(auditLogExports.state, 'pending')),
      )
      .returning({ id: auditLogExports.id });
    if (!row) return false;
    await tx
      .delete(auditLogExportParts)
      .where(and(eq(auditLogExportParts.exportId, id), sql`${auditLogExportParts.attempt} <> ${attempt}`));
    return true;
  });
}

/** A failed build: `error` with `reason` when it was the last attempt, else pending again (lease freed). */
export async function markExportFailed(
  db: Db,
  id: string,
  attempt: number,
  final: boolean,
  reason: string,
  now: Date,
): Promise<void> {
  await db
    .update(auditLogExports)
    .set(
      final
        ? { state: 'error', leaseUntil: null, error: reason, updatedAt: now }
        : { leaseUntil: null, updatedAt: now },
    )
    .where(
      and(eq(auditLogExports.id, id), eq(auditLogExports.attempts, attempt), eq(auditLogExports.state, 'pending')),
    );
  if (final) await deleteExportParts(db, id);
}

/** One part of a ready export's CSV (`seq` from 0), as bytes, or undefined past the last. */
export async function readExportPart(db: Db, row: AuditLogExportRow, seq: number): Promise<Buffer | undefined> {
  const [part] = await db
    .select({ data: auditLogExportParts.data })
    .from(auditLogExportParts)
    .where(
      and(
        eq(auditLogExportParts.exportId, row.id),
        eq(auditLogExportParts.attempt, row.readyAttempt ?? -1),
        eq(auditLogExportParts.seq, seq),
      ),
    )
    .limit(1);
  return part ? Buffer.from(part.data.buffer, part.data.byteOffset, part.data.byteLength) : undefined;
}

/**
 * The bench's seed (bench/audit-export.ts): `count` plain events of the organization in one
 * INSERT ... SELECT over generate_series, one a second ending at `until`, ids in order.
 */
export async function insertSyntheticAuditLogEvents(
  db: Db,
  environmentId: string,
  organizationId: string,
  count: number,
  until: Date,
): Promise<void> {
  await db.execute(sql`insert into ${auditLogEvents}
      (id, environment_id, organization_id, action, occurred_at, actor, targets, context, metadata, version, created_at)
    select 'audit_log_event_bench' || lpad(n::text, 10, '0'), ${environmentId}::text, ${organizationId}::text,
      'document.updated', ${until.toISOString()}::timestamptz - make_interval(secs => ${count}::int - n),
      jsonb_build_object('id', 'user_' || (n % 100), 'type', 'user', 'name', 'User ' || (n % 100)),
      jsonb_build_array(jsonb_build_object('id', 'doc_' || n, 'type', 'document')),
      '{"location":"203.0.113.7","user_agent":"bench/1"}'::jsonb, jsonb_build_object('n', n), 1,
      ${until.toISOString()}::timestamptz
    from generate_series(1, ${count}::int) as n`);
}
