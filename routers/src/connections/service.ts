import { connections, type Db, newId, paginate } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { assertBelowQuota } from '../quotas.ts';
import type { Connection, CreateConnectionInput, ListConnectionsInput } from './schemas.ts';

type ConnectionRow = typeof connections.$inferSelect;

/** The single place that turns a connection row into its wire shape. */
export function toConnection(row: ConnectionRow): Connection {
  return {
    object: 'connection',
    id: row.id,
    organization_id: row.organizationId,
    connection_type: row.connectionType,
    name: row.name,
    state: row.state,
    domains: [],
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Operation 22: keyset pages of the environment's connections, optionally filtered. */
export async function listConnections(scope: Scope, input: z.infer<typeof ListConnectionsInput>) {
  const page = await paginate(
    pageParams(input),
    connections.id,
    (q) =>
      scope.db
        .select()
        .from(connections)
        .where(
          and(
            eq(connections.environmentId, scope.env.id),
            input.organization_id === undefined ? undefined : eq(connections.organizationId, input.organization_id),
            input.connection_type === undefined ? undefined : eq(connections.connectionType, input.connection_type),
            q.keyset,
          ),
        )
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  // The specification shows the connection list without `object`, unlike every other list.
  const { object: _object, ...envelope } = asList(page, toConnection);
  return envelope;
}

/** Admin: stores a connection of an organization (event `connection.created`). */
export async function createConnection(
  scope: Scope,
  input: z.output<typeof CreateConnectionInput>,
): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    // Held until the connection is written: a concurrent delete of the organization waits (and
    // cascades) or has won (404), never a foreign-key violation.
    // NO KEY UPDATE also serialises the creates counted against the connections quota.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowQuota(
      tx,
      scope.deps,
      'connectionsPerOrganization',
      connections,
      and(eq(connections.environmentId, scope.env.id), eq(connections.organizationId, organization.id)),
    );
    const now = scope.now();
    const [row] = await tx
      .insert(connections)
      .values({
        id: newId('connection'),
        environmentId: scope.env.id,
        organizationId: organization.id,
        connectionType: input.connection_type,
        name: input.name,
        state: input.state,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw notFound('connection', 'new');
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.created', connection);
    return connection;
  });
}

/**
 * Admin: activates or deactivates a connection. A change records `connection.activated` or
 * `connection.deactivated`; setting the state it already has changes nothing.
 */
export async function setConnectionState(scope: Scope, id: string, state: 'active' | 'inactive'): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(connections)
      .where(and(eq(connections.id, id), eq(connections.environmentId, scope.env.id)))
      .for('update')
      .limit(1);
    if (!current) throw notFound('connection', id);
    if (current.state === state) return toConnection(current);
    const [row] = await tx
      .update(connections)
      .set({ state, updatedAt: scope.now() })
      .where(and(eq(connections.id, id), eq(connections.environmentId, scope.env.id)))
      .returning();
    if (!row) throw notFound('connection', id);
    const connection = toConnection(row);
    await recordEvent(tx, scope, state === 'active' ? 'connection.activated' : 'connection.deactivated', connection);
    return connection;
  });
}

/** Admin: deletes a connection (event `connection.deleted` with the connection as it was). */
export async function deleteConnection(scope: Scope, id: string): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    const [row] = await tx
      .delete(connections)
      .where(and(eq(connections.id, id), eq(connections.environmentId, scope.env.id)))
      .returning();
    if (!row) throw notFound('connection', id);
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.deleted', connection);
    return connection;
  });
}

/** The environment a connection belongs to (admin commands name only the connection). */
export async function environmentOfConnection(db: Db, id: string): Promise<string> {
  const [row] = await db
    .select({ environmentId: connections.environmentId })
    .from(connections)
    .where(eq(connections.id, id))
    .limit(1);
  if (!row) throw notFound('connection', id);
  return row.environmentId;
}
