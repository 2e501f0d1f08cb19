import { type Db, organizationApiKeys, type PageParams, paginate } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { scopedId } from '../common/store.ts';

export type OrganizationApiKeyRow = typeof organizationApiKeys.$inferSelect;
export type NewOrganizationApiKey = typeof organizationApiKeys.$inferInsert;

export async function insertOrganizationApiKey(tx: Db, values: NewOrganizationApiKey): Promise<OrganizationApiKeyRow> {
  const [row] = await tx.insert(organizationApiKeys).values(values).returning();
  return row as OrganizationApiKeyRow;
}

/** One page of an organization's API keys (keyset on the organization index). */
export function pageOfOrganizationApiKeys(db: Db, environmentId: string, organizationId: string, params: PageParams) {
  return paginate(
    params,
    organizationApiKeys.id,
    (q) =>
      db
        .select()
        .from(organizationApiKeys)
        .where(
          and(
            eq(organizationApiKeys.environmentId, environmentId),
            eq(organizationApiKeys.organizationId, organizationId),
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
