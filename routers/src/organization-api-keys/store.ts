import { type Db, organizationApiKeys, type PageParams, paginate } from '@atrium/db';
import { and, eq, ilike, inArray, or } from 'drizzle-orm';
import { containsPattern, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';
import { joinedUser, userContactColumns, userEmailLike } from '../users/store.ts';

export type OrganizationApiKeyRow = typeof organizationApiKeys.$inferSelect;
export type NewOrganizationApiKey = typeof organizationApiKeys.$inferInsert;

export async function insertOrganizationApiKey(tx: Db, values: NewOrganizationApiKey): Promise<OrganizationApiKeyRow> {
  const [row] = await tx.insert(organizationApiKeys).values(values).returning();
  return row as OrganizationApiKeyRow;
}

/**
 * Whose keys a page lists: an organization's own (not its members'), or a user's (of one
 * organization when `organizationId` is given). `search`: a part of the key's name (the ApiKeys
 * widget's search box).
 */
export type ApiKeyOwner =
  | { organizationId: string; userId?: undefined; search?: string | undefined }
  | { userId: string; organizationId?: string | undefined; search?: undefined };

/** One page of an owner's API keys, keyset on the owner's index (organization or user). */
export function pageOfApiKeys(db: Db, environmentId: string, owner: ApiKeyOwner, params: PageParams) {
  const k = organizationApiKeys;
  return paginate(
    params,
    k.id,
    (q) =>
      db
        .select()
        .from(k)
        .where(
          and(
            eq(k.environmentId, environmentId),
            owner.userId === undefined ? eq(k.ownerType, 'organization') : eq(k.userId, owner.userId),
            owner.organizationId === undefined ? undefined : eq(k.organizationId, owner.organizationId),
            owner.search === undefined ? undefined : ilike(k.name, containsPattern(owner.search)),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The environment's key with this SHA-256 hash, if any: a read, never a write. */
export async function findByKeyHash(
  db: Db,
  environmentId: string,
  keyHash: string,
): Promise<OrganizationApiKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(organizationApiKeys)
    .where(and(eq(organizationApiKeys.keyHash, keyHash), eq(organizationApiKeys.environmentId, environmentId)))
    .limit(1);
  return row;
}

/** Deletes the key; the row as it was, or undefined if the environment has none with this id. */
export async function deleteOrganizationApiKeyRow(
  tx: Db,
  environmentId: string,
  id: string,
): Promise<OrganizationApiKeyRow | undefined> {
  const [row] = await tx
    .delete(organizationApiKeys)
    .where(scopedId(organizationApiKeys, environmentId, id))
    .returning();
  return row;
}

/** Deletes the keys held under these memberships; the rows as they were. */
export function deleteApiKeysOfMemberships(tx: Db, environmentId: string, membershipIds: string[]) {
  if (membershipIds.length === 0) return Promise.resolve([] as OrganizationApiKeyRow[]);
  return tx
    .delete(organizationApiKeys)
    .where(
      and(
        eq(organizationApiKeys.environmentId, environmentId),
        inArray(organizationApiKeys.organizationMembershipId, membershipIds),
      ),
    )
    .returning();
}

/** Deletes every key the user holds; the rows as they were. */
export function deleteApiKeysOfUser(tx: Db, environmentId: string, userId: string) {
  return tx
    .delete(organizationApiKeys)
    .where(and(eq(organizationApiKeys.environmentId, environmentId), eq(organizationApiKeys.userId, userId)))
    .returning();
}

/** A user key with its holder, as the UserApiKeys widget shows it. */
export interface UserApiKeyWithOwnerRow {
  key: OrganizationApiKeyRow;
  owner: { email: string; firstName: string | null; lastName: string | null };
}

/**
 * One page of the user keys held in an organization, of one user when `userId` is given, with
 * their holders; `search` is a part of the key's name or the holder's e-mail.
 */
export function pageOfMemberApiKeys(
  db: Db,
  environmentId: string,
  organizationId: string,
  userId: string | undefined,
  params: PageParams,
  search?: string,
) {
  return paginate(
    params,
    organizationApiKeys.id,
    (q) =>
      db
        .select({
          key: organizationApiKeys,
          owner: userContactColumns,
        })
        .from(organizationApiKeys)
        .innerJoin(...joinedUser(organizationApiKeys.userId))
        .where(
          and(
            eq(organizationApiKeys.environmentId, environmentId),
            eq(organizationApiKeys.organizationId, organizationId),
            eq(organizationApiKeys.ownerType, 'user'),
            userId === undefined ? undefined : eq(organizationApiKeys.userId, userId),
            search === undefined
              ? undefined
              : or(ilike(organizationApiKeys.name, containsPattern(search)), userEmailLike(containsPattern(search))),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.key.id,
  );
}

/** The organization's key with this id, held FOR UPDATE: of the owner kind asked, and of one user if given. */
export async function lockKeyOfOrganization(
  tx: Db,
  environmentId: string,
  organizationId: string,
  id: string,
  owner: { type: 'organization' } | { type: 'user'; userId?: string | undefined },
): Promise<OrganizationApiKeyRow | undefined> {
  const [row] = await tx
    .select()
    .from(organizationApiKeys)
    .where(
      and(
        scopedId(organizationApiKeys, environmentId, id),
        eq(organizationApiKeys.organizationId, organizationId),
        eq(organizationApiKeys.ownerType, owner.type),
        owner.type === 'user' && owner.userId !== undefined ? eq(organizationApiKeys.userId, owner.userId) : undefined,
      ),
    )
    .limit(1)
    .for('update');
  return row;
}

/** Sets when the key expires; the row as it is now. */
export async function setKeyExpiry(tx: Db, id: string, expiresAt: Date | null, now: Date) {
  const [row] = await tx
    .update(organizationApiKeys)
    .set({ expiresAt, updatedAt: now })
    .where(eq(organizationApiKeys.id, id))
    .returning();
  return row as OrganizationApiKeyRow;
}

/**
 * Refuses a key that would take its owner past its quota: the organization's own keys
 * (`organizationApiKeysPerOrganization`; its members' keys count per membership) or a member's
 * (`userApiKeysPerMembership`). The caller holds the owner's row.
 */
export function assertBelowApiKeysQuota(
  tx: Db,
  scope: Scope,
  owner: { organizationId: string } | { membershipId: string },
): Promise<void> {
  const k = organizationApiKeys;
  return 'organizationId' in owner
    ? assertBelowParentQuota(
        tx,
        scope,
        'organizationApiKeysPerOrganization',
        { table: k, parent: k.organizationId, only: eq(k.ownerType, 'organization') },
        owner.organizationId,
      )
    : assertBelowParentQuota(
        tx,
        scope,
        'userApiKeysPerMembership',
        { table: k, parent: k.organizationMembershipId },
        owner.membershipId,
      );
}
