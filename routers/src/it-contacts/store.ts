import { type Db, type ItContactIntent, itContacts, type PageParams, paginate } from '@atrium/db';
import { and, eq, isNotNull, ne } from 'drizzle-orm';
import type { RowLock } from '../common/store.ts';
import { orNotFound, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';

export type ItContactRow = typeof itContacts.$inferSelect;
export type NewItContact = typeof itContacts.$inferInsert;

/** The contact of this organization in the environment, or 404 (a contact of another organization is 404 too). */
export async function loadItContact(
  db: Db,
  environmentId: string,
  organizationId: string,
  id: string,
  lock?: RowLock,
): Promise<ItContactRow> {
  const query = db
    .select()
    .from(itContacts)
    .where(
      and(
        eq(itContacts.environmentId, environmentId),
        eq(itContacts.organizationId, organizationId),
        eq(itContacts.id, id),
      ),
    )
    .limit(1);
  const rows = lock ? await query.for(lock) : await query;
  return orNotFound(rows[0], 'it_contact', id);
}

export async function insertItContact(tx: Db, values: NewItContact): Promise<ItContactRow> {
  const [row] = await tx.insert(itContacts).values(values).returning();
  return row as ItContactRow;
}

export function pageOfItContacts(db: Db, environmentId: string, organizationId: string, params: PageParams) {
  return paginate(
    params,
    itContacts.id,
    (q) =>
      db
        .select()
        .from(itContacts)
        .where(
          and(eq(itContacts.environmentId, environmentId), eq(itContacts.organizationId, organizationId), q.keyset),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The organization's active invitation held by a contact other than `exceptId`, if any. */
export async function otherActiveInvitation(
  tx: Db,
  environmentId: string,
  organizationId: string,
  exceptId: string,
): Promise<ItContactRow | undefined> {
  const [row] = await tx
    .select()
    .from(itContacts)
    .where(
      and(
        eq(itContacts.environmentId, environmentId),
        eq(itContacts.organizationId, organizationId),
        isNotNull(itContacts.invitedAt),
        ne(itContacts.id, exceptId),
      ),
    )
    .limit(1);
  return row;
}

/** Sets (intents and time) or clears (nulls) the contact's invitation. */
export async function setInvitation(
  tx: Db,
  environmentId: string,
  id: string,
  intents: ItContactIntent[] | null,
  at: Date | null,
  now: Date,
): Promise<void> {
  await tx
    .update(itContacts)
    .set({ invitationIntents: intents, invitedAt: at, updatedAt: now })
    .where(scopedId(itContacts, environmentId, id));
}

export async function deleteItContactRow(tx: Db, environmentId: string, id: string): Promise<void> {
  await tx.delete(itContacts).where(scopedId(itContacts, environmentId, id));
}

/** Refuses an IT contact that would take the organization past `itContactsPerOrganization`; the caller holds its row. */
export function assertBelowItContactsPerOrganization(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  return assertBelowParentQuota(
    tx,
    scope,
    'itContactsPerOrganization',
    { table: itContacts, parent: itContacts.organizationId },
    organizationId,
  );
}
