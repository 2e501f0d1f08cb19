import { type ConnectionState, type ConnectionType, connections, type Db, type PageParams, paginate } from '@atrium/db';
import { and, desc, eq } from 'drizzle-orm';
import { loadScoped, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';

export type ConnectionRow = typeof connections.$inferSelect;
export type NewConnection = typeof connections.$inferInsert;

export interface ConnectionFilter {
  organizationId?: string | undefined;
  connectionType?: ConnectionType | undefined;
}

/** One page of the environment's connections, optionally of one organization or type. */
export function pageOfConnections(db: Db, environmentId: string, params: PageParams, filter: ConnectionFilter) {
  return paginate(
    params,
    connections.id,
    (q) =>
      db
        .select()
        .from(connections)
        .where(
          and(
            eq(connections.environmentId, environmentId),
            filter.organizationId === undefined ? undefined : eq(connections.organizationId, filter.organizationId),
            filter.connectionType === undefined ? undefined : eq(connections.connectionType, filter.connectionType),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The connection of the environment, or 404. */
export function loadConnection(db: Db, environmentId: string, id: string): Promise<ConnectionRow> {
  return loadScoped(db, connections, 'connection', environmentId, id);
}

/** The connection of the environment held FOR UPDATE, or 404. */
export function lockConnection(tx: Db, environmentId: string, id: string): Promise<ConnectionRow> {
  return loadScoped(tx, connections, 'connection', environmentId, id, 'update');
}

export async function insertConnection(tx: Db, values: NewConnection): Promise<ConnectionRow> {
  const [row] = await tx.insert(connections).values(values).returning();
  return row as ConnectionRow;
}

export async function updateConnectionState(
  tx: Db,
  environmentId: string,
  id: string,
  state: ConnectionState,
  now: Date,
): Promise<ConnectionRow | undefined> {
  const [row] = await tx
    .update(connections)
    .set({ state, updatedAt: now })
    .where(scopedId(connections, environmentId, id))
    .returning();
  return row;
}

export async function updateConnectionName(
  tx: Db,
  environmentId: string,
  id: string,
  name: string,
  now: Date,
): Promise<ConnectionRow | undefined> {
  const [row] = await tx
    .update(connections)
    .set({ name, updatedAt: now })
    .where(scopedId(connections, environmentId, id))
    .returning();
  return row;
}

/** Deletes the connection; the row as it was, or undefined if there was none. */
export async function deleteConnectionRow(
  tx: Db,
  environmentId: string,
  id: string,
): Promise<ConnectionRow | undefined> {
  const [row] = await tx
    .delete(connections)
    .where(scopedId(connections, environmentId, id))
    .returning();
  return row;
}

/** The environment of a connection named only by its id (admin commands), if it exists. */
export async function environmentIdOfConnection(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db
    .select({ environmentId: connections.environmentId })
    .from(connections)
    .where(eq(connections.id, id))
    .limit(1);
  return row?.environmentId;
}

/** The organization's connections, newest first, at most `limit` (the widget shows the first). */
export function connectionRowsOfOrganization(
  db: Db,
  environmentId: string,
  organizationId: string,
  limit: number,
): Promise<ConnectionRow[]> {
  return db
    .select()
    .from(connections)
    .where(and(eq(connections.environmentId, environmentId), eq(connections.organizationId, organizationId)))
    .orderBy(desc(connections.id))
    .limit(limit);
}

/** Refuses a connection that would take the organization past `connectionsPerOrganization`; the caller holds its row. */
export function assertBelowConnectionsPerOrganization(tx: Db, scope: Scope, organizationId: string): Promise<void> {
  return assertBelowParentQuota(
    tx,
    scope,
    'connectionsPerOrganization',
    { table: connections, parent: connections.organizationId },
    organizationId,
  );
}
