import { builtOnce, type Db, type PageParams, paginate, renderedOnce, users } from '@atrium/db';
import { and, eq, getTableColumns, inArray, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { loadScoped, orNotFound, qualified as q, type RowLock } from '../common/store.ts';
import type { UserRow } from '../user-wire.ts';

export type { UserRow };
export type NewUser = typeof users.$inferInsert;
export type UserChanges = Partial<NewUser>;

/** The user of the environment, or 404; `lock` holds it in the caller's transaction. */
export function findUser(db: Db, environmentId: string, id: string, lock?: RowLock): Promise<UserRow> {
  return loadScoped(db, users, 'user', environmentId, id, lock);
}

/** The user of the environment with this external id, or 404 naming it. */
export async function findUserByExternalId(db: Db, environmentId: string, externalId: string): Promise<UserRow> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, environmentId), eq(users.externalId, externalId)))
    .limit(1);
  return orNotFound(row, 'user', externalId);
}

/** Records a sign-in (a client token issued for the user) in the caller's transaction. */
export async function markSignedIn(tx: Db, environmentId: string, id: string, at: Date): Promise<void> {
  await signedIn(tx, { env: environmentId, id, at });
}
/** Built once (`builtOnce`): it runs in every sign-in's transaction. */
const signedIn = builtOnce(['env', 'id', 'at'] as const, (db, v) =>
  db
    .update(users)
    .set({ lastSignInAt: v.at as never })
    .where(and(eq(users.environmentId, v.env), eq(users.id, v.id))),
);

export interface UserFilter {
  email?: string | undefined;
  /** The ids of the users to keep, as a subquery of the same statement (an organization's members). */
  ids?: SQLWrapper | undefined;
}

/** One page of the environment's users, by email (case-insensitive) and by a subquery of their ids. */
export function pageOfUsers(db: Db, environmentId: string, params: PageParams, filter: UserFilter) {
  const byEmail = filter.email ? eq(sql`lower(${users.email})`, filter.email.toLowerCase()) : undefined;
  const byOrganization = filter.ids ? inArray(users.id, filter.ids) : undefined;
  return paginate(
    params,
    users.id,
    (q) =>
      db
        .select()
        .from(users)
        .where(and(eq(users.environmentId, environmentId), byEmail, byOrganization, q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

/** The environment's users with any of these e-mails, compared case-insensitively (`emails` lower-cased). */
export function usersWithEmails(db: Db, environmentId: string, emails: string[]): Promise<UserRow[]> {
  if (emails.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, environmentId), inArray(sql`lower(${users.email})`, emails)));
}

/** A provisioned person's user to insert: its id, e-mail and names. */
export interface ProvisionedUser {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
}

/**
 * Inserts provisioned users of the environment, skipping any whose e-mail the environment holds
 * already (a concurrent insert); answers those inserted, as stored (every other column at its
 * default). One statement rendered once, the people as one JSON parameter: a SCIM create runs it.
 */
export async function insertUsersIfAbsent(
  tx: Db,
  environmentId: string,
  people: ProvisionedUser[],
  now: Date,
): Promise<UserRow[]> {
  if (people.length === 0) return [];
  const rows = await insertUsersStatement<{ id: string }>(tx, {
    env: environmentId,
    now: now.toISOString(),
    rows: JSON.stringify(
      people.map((p) => ({ id: p.id, email: p.email, first_name: p.firstName, last_name: p.lastName })),
    ),
  });
  const inserted = new Set(rows.map((row) => row.id));
  return people
    .filter((p) => inserted.has(p.id))
    .map((p) => ({
      id: p.id,
      environmentId,
      email: p.email,
      emailVerified: false,
      firstName: p.firstName,
      lastName: p.lastName,
      profilePictureUrl: null,
      locale: null,
      lastSignInAt: null,
      externalId: null,
      metadata: {},
      passwordHash: null,
      passwordHashType: null,
      createdAt: now,
      updatedAt: now,
    }));
}

const insertUsersStatement = renderedOnce(
  ['env', 'now', 'rows'] as const,
  (v) => sql`insert into ${users} (id, environment_id, email, first_name, last_name, created_at, updated_at)
    select p.id, ${v.env}, p.email, p.first_name, p.last_name, ${v.now}::timestamptz, ${v.now}::timestamptz
    from jsonb_to_recordset(${v.rows}::jsonb) as p(id text, email text, first_name text, last_name text)
    on conflict do nothing
    returning id`,
);

export async function insertUser(tx: Db, values: NewUser): Promise<UserRow> {
  const [row] = await tx.insert(users).values(values).returning();
  return row as UserRow;
}

export async function updateUserRow(tx: Db, id: string, changes: UserChanges): Promise<UserRow> {
  const [row] = await tx.update(users).set(changes).where(eq(users.id, id)).returning();
  return row as UserRow;
}

/** Deletes the user; their memberships (and their group links) go with them by foreign key. */
export async function deleteUserRow(tx: Db, id: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, id));
}

/** The environment's user with this e-mail (case-insensitive), if any. Built once: an SSO sign-in reads it. */
export async function userByEmail(db: Db, environmentId: string, email: string): Promise<UserRow | undefined> {
  const [row] = await userOfEmail(db, { env: environmentId, email });
  return row;
}
const userOfEmail = builtOnce(['env', 'email'] as const, (db, v) =>
  db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, v.env), sql`lower(${users.email}) = lower(${v.email})`))
    .limit(1),
);

/** The environment's user with this id, if any. Built once: an SSO sign-in reads it. */
export async function userById(db: Db, environmentId: string, id: string): Promise<UserRow | undefined> {
  const [row] = await userOfId(db, { env: environmentId, id });
  return row;
}
const userOfId = builtOnce(['env', 'id'] as const, (db, v) =>
  db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, v.env), eq(users.id, v.id)))
    .limit(1),
);

/** The id of the environment's user with this e-mail (case-insensitive), held FOR KEY SHARE. */
export async function userIdByEmail(tx: Db, environmentId: string, email: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.environmentId, environmentId), eq(sql`lower(${users.email})`, email.toLowerCase())))
    .for('key share')
    .limit(1);
  return row?.id;
}

/**
 * Inserts the user unless one with the e-mail exists by now (the insert waits for a concurrent
 * transaction that made it, then does nothing); undefined when it did nothing.
 */
export async function insertUserUnlessTaken(tx: Db, values: NewUser): Promise<UserRow | undefined> {
  const [row] = await tx.insert(users).values(values).onConflictDoNothing().returning();
  return row;
}

/** A user's e-mail and names (an API key's holder as the widgets show it). */
export type UserContact = Pick<UserRow, 'email' | 'firstName' | 'lastName'>;
export const userContactColumns = { email: users.email, firstName: users.firstName, lastName: users.lastName };

/** The holder of a user key (for the widget's answers); empty fields for a user gone. */
export async function contactOfUser(db: Db, userId: string): Promise<UserContact> {
  const [row] = await db.select(userContactColumns).from(users).where(eq(users.id, userId)).limit(1);
  return row ?? { email: '', firstName: null, lastName: null };
}

// Fragments of other stores' statements that read a user with their own rows (one statement each).

/** Every column of a user, for another store's select that joins the user (`joinedUser`). */
export const userColumns = getTableColumns(users);

/** The arguments of another store's `.innerJoin(...joinedUser(column))`: the user its `userId` column names. */
export function joinedUser(userId: AnyPgColumn) {
  return [users, eq(users.id, userId)] as const;
}

/** `join users <alias> on <alias>.id = <userId>`, for another store's SQL text; it reads the user's columns by `alias`. */
export function joinUserAs(alias: string, userId: SQL): SQL {
  return sql`join ${users} ${sql.raw(alias)} on ${sql.raw(alias)}.id = ${userId}`;
}

/** Whether the user's e-mail contains `pattern` case-insensitively (`ilike`), in a statement that joins the user. */
export function userEmailLike(pattern: string): SQL {
  return sql`${users.email} ilike ${pattern}`;
}

/**
 * A joined user's columns after its id, qualified, in the order of a JSON tuple built by another
 * store's statement (the memberships page): e-mail, verified, first and last name, picture, locale,
 * last sign-in, external id, metadata, created, updated.
 */
export const userTupleColumns = sql.join(
  [
    users.email,
    users.emailVerified,
    users.firstName,
    users.lastName,
    users.profilePictureUrl,
    users.locale,
    users.lastSignInAt,
    users.externalId,
    users.metadata,
    users.createdAt,
    users.updatedAt,
  ].map((column) => q(column)),
  sql`, `,
);
