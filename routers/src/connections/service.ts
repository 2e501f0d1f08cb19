import { type Db, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { orNotFound } from '../common/store.ts';
import { recordEvent } from '../events/record.ts';
import type { Scope } from '../kernel/scope.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import type { Connection, CreateConnectionInput, ListConnectionsInput } from './schemas.ts';
import {
  assertBelowConnectionsPerOrganization,
  type ConnectionRow,
  deleteConnectionRow,
  environmentIdOfConnection,
  insertConnection,
  loadConnection,
  lockConnection,
  pageOfConnections,
  updateConnectionName,
  updateConnectionState,
} from './store.ts';

/** The single place that turns a connection row into its wire shape. */
export function toConnection(row: ConnectionRow): Connection {
  const connection: Connection = {
    object: 'connection',
    id: row.id,
    organization_id: row.organizationId,
    connection_type: row.connectionType,
    name: row.name,
    state: row.state,
    status: row.state === 'active' ? 'linked' : 'unlinked',
    domains: row.domains.map((d) => ({ object: 'connection_domain', id: d.id, domain: d.domain })),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
  if (isSamlType(row.connectionType)) connection.options = { signing_cert: row.samlSpCertificate ?? null };
  return connection;
}

/** A connection type that signs in over SAML (`GenericSAML`, `OktaSAML`, ...). */
export function isSamlType(type: string): boolean {
  return type.endsWith('SAML');
}

/** Operation 22: keyset pages of the environment's connections, optionally filtered. */
export async function listConnections(scope: Scope, input: z.infer<typeof ListConnectionsInput>) {
  const filter = { organizationId: input.organization_id, connectionType: input.connection_type };
  const page = await pageOfConnections(scope.db, scope.env.id, pageParams(input), filter);
  // The specification shows the connection list without `object`, unlike every other list.
  const { object: _object, ...envelope } = asList(page, toConnection);
  return envelope;
}

/** `GET /connections/:id`: the connection of the caller's environment, or 404. */
export async function getConnection(scope: Scope, id: string): Promise<Connection> {
  return toConnection(await loadConnection(scope.db, scope.env.id, id));
}

/** Admin: stores a connection of an organization (event `connection.created`). */
export async function createConnection(
  scope: Scope,
  input: z.output<typeof CreateConnectionInput>,
): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    // Held until the connection is written: a concurrent delete of the organization waits (and
    // cascades) or has won (404). NO KEY UPDATE also serialises the count against the quota.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowConnectionsPerOrganization(tx, scope, organization.id);
    const now = scope.now();
    const row = await insertConnection(tx, {
      id: newId('connection'),
      environmentId: scope.env.id,
      organizationId: organization.id,
      connectionType: input.connection_type,
      name: input.name,
      state: input.state,
      createdAt: now,
      updatedAt: now,
    });
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
    const current = await lockConnection(tx, scope.env.id, id);
    if (current.state === state) return toConnection(current);
    const row = orNotFound(await updateConnectionState(tx, scope.env.id, id, state, scope.now()), 'connection', id);
    const connection = toConnection(row);
    await recordEvent(tx, scope, state === 'active' ? 'connection.activated' : 'connection.deactivated', connection);
    return connection;
  });
}

/**
 * Renames a connection (the client surfaces' `updateSsoConnection`): event `connection.updated`;
 * the name it already has changes nothing.
 */
export async function renameConnection(scope: Scope, id: string, name: string): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    const current = await lockConnection(tx, scope.env.id, id);
    if (current.name === name) return toConnection(current);
    const row = orNotFound(await updateConnectionName(tx, scope.env.id, id, name, scope.now()), 'connection', id);
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.updated', connection);
    return connection;
  });
}

/**
 * Deletes a connection (`DELETE /connections/:id`, and the admin command): event
 * `connection.deleted` with the connection as it was, in the same transaction.
 */
export async function deleteConnection(scope: Scope, id: string): Promise<Connection> {
  return scope.db.transaction(async (tx) => {
    const row = orNotFound(await deleteConnectionRow(tx, scope.env.id, id), 'connection', id);
    const connection = toConnection(row);
    await recordEvent(tx, scope, 'connection.deleted', connection);
    return connection;
  });
}

/** The environment a connection belongs to (admin commands name only the connection). */
export async function environmentOfConnection(db: Db, id: string): Promise<string> {
  return orNotFound(await environmentIdOfConnection(db, id), 'connection', id);
}
