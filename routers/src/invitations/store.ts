import { type Db, invitations, type PageParams, paginate } from '@atrium/db';
import { and, eq, gt, lte, type SQL, sql } from 'drizzle-orm';
import { loadScoped, type RowLock } from '../common/store.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';

export type InvitationRow = typeof invitations.$inferSelect;
export type NewInvitation = typeof invitations.$inferInsert;
export type InvitationChanges = Partial<NewInvitation>;

/** The invitation of the environment, or 404; `lock` holds it in the caller's transaction. */
export function findInvitation(db: Db, environmentId: string, id: string, lock?: RowLock): Promise<InvitationRow> {
  return loadScoped(db, invitations, 'invitation', environmentId, id, lock);
}

/** The invitation whose token hashes to `tokenHash`, or 404 (the message does not repeat the token). */
export async function findInvitationByTokenHash(db: Db, environmentId: string, tokenHash: string) {
  const [row] = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.environmentId, environmentId), eq(invitations.tokenHash, tokenHash)))
    .limit(1);
  if (!row) throw new ApiError(404, 'entity_not_found', 'Invitation not found for this token.');
  return row;
}

export interface InvitationFilter {
  organizationId?: string | undefined;
  email?: string | undefined;
}

/** One page of the environment's invitations, by organization and by e-mail (case-insensitive). */
export function pageOfInvitations(db: Db, environmentId: string, params: PageParams, filter: InvitationFilter) {
  const where = and(
    eq(invitations.environmentId, environmentId),
    filter.organizationId ? eq(invitations.organizationId, filter.organizationId) : undefined,
    filter.email ? eq(sql`lower(${invitations.email})`, filter.email.toLowerCase()) : undefined,
  );
  return paginate(
    params,
    invitations.id,
    (q) => db.select().from(invitations).where(and(where, q.keyset)).orderBy(q.orderBy).limit(q.limit),
    (row) => row.id,
  );
}

/**
 * Stores `expired` on the pending invitations of this e-mail and organization whose time has
 * passed, so that the one-pending-invitation index lets a new one in.
 */
export async function expireLapsedInvitations(
  tx: Db,
  environmentId: string,
  organizationId: string | null,
  email: string,
  now: Date,
): Promise<void> {
  await tx
    .update(invitations)
    .set({ state: 'expired', updatedAt: now })
    .where(
      and(
        eq(invitations.environmentId, environmentId),
        eq(sql`coalesce(${invitations.organizationId}, '')`, organizationId ?? ''),
        eq(sql`lower(${invitations.email})`, email.toLowerCase()),
        eq(invitations.state, 'pending'),
        lte(invitations.expiresAt, now),
      ),
    );
}

export async function insertInvitation(tx: Db, values: NewInvitation): Promise<InvitationRow> {
  const [row] = await tx.insert(invitations).values(values).returning();
  return row as InvitationRow;
}

export async function updateInvitationRow(tx: Db, id: string, changes: InvitationChanges): Promise<InvitationRow> {
  const [row] = await tx.update(invitations).set(changes).where(eq(invitations.id, id)).returning();
  return row as InvitationRow;
}

/**
 * Refuses an invitation that would take the organization past `pendingInvitationsPerOrganization`;
 * the caller holds its row. An expired invitation is answered `expired` though stored `pending`: it no longer counts.
 */
export function assertBelowPendingInvitationsPerOrganization(
  tx: Db,
  scope: Scope,
  organizationId: string,
): Promise<void> {
  const only = and(eq(invitations.state, 'pending'), gt(invitations.expiresAt, scope.now()));
  return assertBelowParentQuota(
    tx,
    scope,
    'pendingInvitationsPerOrganization',
    { table: invitations, parent: invitations.organizationId, only },
    organizationId,
  );
}

/**
 * The organization's invitations (`i`) that are the latest of their e-mail there (no later one)
 * and not accepted, as one select of another store's statement: the members page's invitation
 * branch. `columns` and `where` read `i`.
 */
export function latestInvitationsOf(parts: { env: SQL; org: SQL; columns: SQL; where: SQL }): SQL {
  return sql`select ${parts.columns}
      from ${invitations} i
      where i.environment_id = ${parts.env} and i.organization_id = ${parts.org} and i.state <> 'accepted'
        and ${parts.where}
        and not exists (select 1 from ${invitations} i2
          where i2.environment_id = ${parts.env} and lower(i2.email) = lower(i.email)
            and i2.organization_id = ${parts.org} and i2.id > i.id)`;
}
