import { type Db, newId, organizationMemberships, organizations, paginate, users } from '@atrium/db';
import { and, eq, getTableColumns, inArray, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { alreadyMember, notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowQuota } from '../quotas.ts';
import type {
  CreateOrganizationMembershipInput,
  ListOrganizationMembershipsInput,
  OrganizationMembership,
} from './schemas.ts';

export type MembershipRow = typeof organizationMemberships.$inferSelect & { organizationName: string };

/** The single place that turns a membership row (with its organization's name) into its wire shape. */
export function toOrganizationMembership(row: MembershipRow): OrganizationMembership {
  return {
    object: 'organization_membership',
    id: row.id,
    user_id: row.userId,
    organization_id: row.organizationId,
    organization_name: row.organizationName,
    status: row.status,
    directory_managed: row.directoryManaged,
    custom_attributes: row.customAttributes,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Membership columns plus the organization's current name, for every read of a membership. */
export const membershipColumns = { ...getTableColumns(organizationMemberships), organizationName: organizations.name };

/** Memberships matching `where` (which must carry the environment), with their organization's name. */
export function findMemberships(db: Db, where: SQL | undefined) {
  return db
    .select(membershipColumns)
    .from(organizationMemberships)
    .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
    .where(where);
}

const inEnvironment = (scope: Scope, id: string) =>
  and(eq(organizationMemberships.environmentId, scope.env.id), eq(organizationMemberships.id, id));

/**
 * Loads one membership of the environment or throws 404. With `lock`, the membership row is held
 * (FOR KEY SHARE) until the transaction ends, so a concurrent delete of it (or of its user or
 * organization, which cascades) waits: a row written that references it never meets a
 * foreign-key violation, and a request that lost the race to the delete answers 404.
 */
export async function requireMembership(db: Db, scope: Scope, id: string, lock = false): Promise<MembershipRow> {
  const query = findMemberships(db, inEnvironment(scope, id));
  const [row] = lock ? await query.for('key share', { of: organizationMemberships }) : await query;
  if (!row) throw notFound('organization_membership', id);
  return row;
}

export async function getOrganizationMembership(scope: Scope, id: string): Promise<OrganizationMembership> {
  return toOrganizationMembership(await requireMembership(scope.db, scope, id));
}

export async function listOrganizationMemberships(
  scope: Scope,
  input: z.infer<typeof ListOrganizationMembershipsInput>,
) {
  const params = pageParams(input);
  const filters = and(
    eq(organizationMemberships.environmentId, scope.env.id),
    input.user_id ? eq(organizationMemberships.userId, input.user_id) : undefined,
    input.organization_id ? eq(organizationMemberships.organizationId, input.organization_id) : undefined,
    input.statuses && input.statuses.length > 0 ? inArray(organizationMemberships.status, input.statuses) : undefined,
  );
  const page = await paginate(
    params,
    organizationMemberships.id,
    (q) =>
      scope.db
        .select(membershipColumns)
        .from(organizationMemberships)
        .innerJoin(organizations, eq(organizations.id, organizationMemberships.organizationId))
        .where(and(filters, q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  return asList(page, toOrganizationMembership);
}

export async function createOrganizationMembership(
  scope: Scope,
  input: z.infer<typeof CreateOrganizationMembershipInput>,
): Promise<OrganizationMembership> {
  return scope.db.transaction(async (tx) => {
    // The user and the organization are locked (FOR NO KEY UPDATE / SHARE) so that a concurrent
    // delete of either cannot slip in between: it waits, or it won and this answers 404. The
    // user's lock also serialises the creates counted against the memberships-per-user quota.
    const [user] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.environmentId, scope.env.id), eq(users.id, input.user_id)))
      .for('no key update')
      .limit(1);
    if (!user) throw notFound('user', input.user_id);
    await assertBelowQuota(
      tx,
      scope.deps,
      'membershipsPerUser',
      organizationMemberships,
      and(eq(organizationMemberships.environmentId, scope.env.id), eq(organizationMemberships.userId, user.id)),
    );
    // Locked so that a concurrent delete of the organization cannot slip in between.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'share');
    const now = scope.now();
    const [row] = await tx
      .insert(organizationMemberships)
      .values({
        id: newId('organizationMembership'),
        environmentId: scope.env.id,
        userId: user.id,
        organizationId: organization.id,
        status: 'active',
        directoryManaged: false,
        customAttributes: {},
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const membership = toOrganizationMembership({
      ...(row as typeof organizationMemberships.$inferSelect),
      organizationName: organization.name,
    });
    await recordEvent(tx, scope, 'organization_membership.created', membership);
    return membership;
  });
}

/** Deactivate and reactivate: sets the status; an unchanged status is a no-op without an event. */
export async function setMembershipStatus(
  scope: Scope,
  id: string,
  status: 'active' | 'inactive',
): Promise<OrganizationMembership> {
  return scope.db.transaction(async (tx) => {
    const [current] = await tx
      .select({ id: organizationMemberships.id, status: organizationMemberships.status })
      .from(organizationMemberships)
      .where(inEnvironment(scope, id))
      .for('update')
      .limit(1);
    if (!current) throw notFound('organization_membership', id);
    if (current.status !== status) {
      await tx
        .update(organizationMemberships)
        .set({ status, updatedAt: scope.now() })
        .where(eq(organizationMemberships.id, current.id));
    }
    const membership = toOrganizationMembership(await requireMembership(tx, scope, id));
    if (current.status !== status) await recordEvent(tx, scope, 'organization_membership.updated', membership);
    return membership;
  });
}

/** Deletes the membership; its group links go with it by foreign key, in the same statement. */
export async function deleteOrganizationMembership(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const current = await requireMembership(tx, scope, id);
    const deleted = await tx
      .delete(organizationMemberships)
      .where(inEnvironment(scope, id))
      .returning({ id: organizationMemberships.id });
    if (deleted.length === 0) throw notFound('organization_membership', id);
    await recordEvent(tx, scope, 'organization_membership.deleted', toOrganizationMembership(current));
  });
}
