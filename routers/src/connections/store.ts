import {
  type AttributeMapping,
  builtOnce,
  type ConnectionState,
  type ConnectionType,
  connections,
  type Db,
  type PageParams,
  paginate,
} from '@atrium/db';
import { and, desc, eq, getTableColumns, gt, ne, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn, SelectedFields } from 'drizzle-orm/pg-core';
import { loadScoped, scopedId } from '../common/store.ts';
import { environmentInfoColumns, joinedEnvironment } from '../environments/store.ts';
import type { EnvironmentInfo, Scope } from '../kernel/scope.ts';
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

/**
 * The connections of an organization: all, oldest first, for sign-in (sso picks the first usable
 * one for `organization`); with a `limit`, the newest first, at most that many, for the pages
 * that list them (the widget, the portal).
 */
export function connectionsOfOrganization(
  db: Db,
  environmentId: string,
  organizationId: string,
  limit?: number,
): Promise<ConnectionRow[]> {
  const query = db
    .select()
    .from(connections)
    .where(and(eq(connections.environmentId, environmentId), eq(connections.organizationId, organizationId)))
    .orderBy(limit === undefined ? connections.id : desc(connections.id));
  return limit === undefined ? query : query.limit(limit);
}

/** The connections of the environment of one type, oldest first (the `provider` parameter). */
export function connectionsOfType(db: Db, environmentId: string, connectionType: string) {
  return db
    .select()
    .from(connections)
    .where(and(eq(connections.environmentId, environmentId), eq(connections.connectionType, connectionType as never)))
    .orderBy(connections.id);
}

/** A connection named only by its id (a public URL names it) with its environment. */
export async function connectionWithEnvironment(
  db: Db,
  id: string,
): Promise<{ connection: ConnectionRow; env: EnvironmentInfo } | undefined> {
  const [row] = await selectConnectionsWithEnvironment(db, {}).where(eq(connections.id, id)).limit(1);
  return row;
}

// A sign-in's mark (sso's completeSignIn, in its transaction), built once (`builtOnce`) as sso's
// own sign-in statements are: Drizzle building it on every ACS POST cost more than running it.

/**
 * Marks a sign-in on the connection and activates it if it was not active: the row it activated,
 * or undefined when it was active already (the steady state, one statement). Plain UPDATEs only:
 * their row lock does not wait for the KEY SHARE locks that concurrent sign-ins hold on the
 * connection (their inserts reference it), where a `SELECT ... FOR UPDATE` did and deadlocked.
 */
const touchActiveConnection = builtOnce(['id', 'now'] as const, (db, v) =>
  db
    .update(connections)
    .set({ lastSignInAt: v.now as never, updatedAt: v.now as never })
    .where(and(eq(connections.id, v.id), eq(connections.state, 'active')))
    .returning({ id: connections.id }),
);

export async function markConnectionSignIn(tx: Db, id: string, now: Date): Promise<ConnectionRow | undefined> {
  const touch = () => touchActiveConnection(tx, { id, now });
  if ((await touch()).length > 0) return undefined;
  const [activated] = await tx
    .update(connections)
    .set({ lastSignInAt: now, state: 'active', updatedAt: now })
    .where(and(eq(connections.id, id), ne(connections.state, 'active')))
    .returning();
  // None: a concurrent sign-in activated it between the two statements (it records the event).
  if (!activated) await touch();
  return activated;
}

// Protocol configuration (sso/oidc, sso/saml) -------------------------------------------------

/** What configuring an OpenID Connect connection writes on its row. */
export interface OidcColumns {
  oidcIssuer: string;
  oidcDiscoveryEndpoint: string;
  oidcMetadata: Record<string, unknown>;
  oidcClientId: string;
  /** `null` clears the secret (a public client); `undefined` keeps the stored one. */
  oidcClientSecretSealed: string | null | undefined;
  oidcScopes: string[];
  attributeMapping: AttributeMapping;
}

/** The SAML columns a configuration writes. */
export type SamlConnectionColumns = Pick<
  ConnectionRow,
  | 'samlIdpEntityId'
  | 'samlIdpSsoUrl'
  | 'samlIdpMetadataUrl'
  | 'samlIdpCertificates'
  | 'samlSignRequests'
  | 'samlSpPrivateKeySealed'
  | 'samlSpCertificate'
  | 'samlIdpInitiatedEnabled'
  | 'attributeMapping'
>;

/**
 * Writes a connection's protocol configuration (OpenID Connect or SAML columns; an `undefined`
 * value keeps the stored one, as Drizzle leaves it out of the update); the row, or undefined if
 * it is gone.
 */
export async function updateConfiguration(
  tx: Db,
  environmentId: string,
  id: string,
  values: OidcColumns | SamlConnectionColumns,
  now: Date,
): Promise<ConnectionRow | undefined> {
  const [row] = await tx
    .update(connections)
    .set({ ...values, updatedAt: now })
    .where(scopedId(connections, environmentId, id))
    .returning();
  return row;
}

/**
 * A page of the connections (every environment) that hold IdP certificates, in id order after
 * `afterId`: what the certificate-expiry pass walks.
 */
export function samlConnectionsWithCertificates(db: Db, afterId: string, limit: number): Promise<ConnectionRow[]> {
  return db
    .select()
    .from(connections)
    .where(and(gt(connections.id, afterId), sql`jsonb_array_length(${connections.samlIdpCertificates}) > 0`))
    .orderBy(connections.id)
    .limit(limit);
}

/** Replaces a connection's certificate list (the expiry pass marks what it has announced). */
export async function updateIdpCertificates(
  tx: Db,
  id: string,
  certificates: ConnectionRow['samlIdpCertificates'],
): Promise<void> {
  await tx.update(connections).set({ samlIdpCertificates: certificates }).where(eq(connections.id, id));
}

// Fragments of other stores' statements that read a connection with their own rows (one statement each).

/** Every column of a connection (`ConnectionRow`), for another store's statement that reads it. */
export const connectionColumns = getTableColumns(connections);

/**
 * `select <connection>, <env>, <more> from connections join environments`: the start of a select
 * of connections with their environment (`connection`, `env`) and the caller's columns (`more`),
 * to which the caller adds its joins and its where (on `connectionColumns`). One statement.
 */
export function selectConnectionsWithEnvironment<T extends SelectedFields>(db: Db, more: T) {
  return db
    .select({ connection: connections, env: environmentInfoColumns, ...more })
    .from(connections)
    .innerJoin(...joinedEnvironment(connections.environmentId));
}

/** The arguments of another store's `.innerJoin(...joinedConnection(column))`: the connection its column names. */
export function joinedConnection(connectionId: AnyPgColumn) {
  return [connections, eq(connections.id, connectionId)] as const;
}

/**
 * `join connections <alias> on <alias>.id = <connectionId> and <alias>.environment_id = <environmentId>`,
 * for another store's SQL text; it reads the connection's columns by `alias`.
 */
export function joinConnectionAs(alias: string, connectionId: SQL, environmentId: SQL): SQL {
  const a = sql.raw(alias);
  return sql`join ${connections} ${a} on ${a}.id = ${connectionId} and ${a}.environment_id = ${environmentId}`;
}
