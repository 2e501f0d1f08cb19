// What the provisioning tests share: a directory of a fresh organization, the fields an identity
// provider writes, and reads of what provisioning stored (straight from the tables).
import {
  directories,
  directoryGroups,
  directoryUsers,
  events,
  organizationMemberships,
  sessions,
  users,
} from '@atrium/db';
import {
  contractError,
  createDirectory,
  type DirectoryGroupFields,
  type DirectoryUserFields,
  scopeOf,
  verifyClientToken,
} from '@atrium/routers';
import { and, asc, eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

export type Scope = Awaited<ReturnType<typeof scopeOf>>;
export type DirectoryRow = typeof directories.$inferSelect;

export interface DirectoryWorld {
  env: TestEnvironment;
  scope: Scope;
  organizationId: string;
  /** The directory as the SCIM surface hands it to the write functions (re-read: `fresh()`). */
  directory: DirectoryRow;
  fresh: () => Promise<DirectoryRow>;
}

/** A new environment, an organization and an `okta scim v2.0` directory of it. */
export async function directoryWorld(env?: TestEnvironment): Promise<DirectoryWorld> {
  const e = env ?? (await newEnvironment());
  const scope = await scopeOf(e.deps, e.environmentId);
  const organization = await e.caller.organizations.create({ name: 'Acme' });
  const created = await createDirectory(scope, {
    organization_id: organization.id,
    type: 'okta scim v2.0',
    name: 'Acme Okta',
  });
  const fresh = async () => {
    const [row] = await e.deps.db.select().from(directories).where(eq(directories.id, created.id));
    if (!row) throw new Error('directory gone');
    return row;
  };
  return { env: e, scope, organizationId: organization.id, directory: await fresh(), fresh };
}

let counter = 0;

/** A call of a write function that must be refused: its status and code as every surface renders them. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await call;
  } catch (error) {
    const { status, body } = contractError(error);
    return { status, code: body.code };
  }
  throw new Error('expected the call to be refused');
}

/** A SCIM user as the SCIM surface maps it to fields (a unique userName unless given). */
export function userFields(
  overrides: Partial<DirectoryUserFields> & { email?: string | null } = {},
): DirectoryUserFields {
  const email = overrides.email === undefined ? uniqueEmail('scim') : overrides.email;
  counter += 1;
  const userName = overrides.userName ?? `${email ?? 'user'}-${counter}`;
  const firstName = overrides.firstName === undefined ? 'Ada' : overrides.firstName;
  const lastName = overrides.lastName === undefined ? 'Lovelace' : overrides.lastName;
  const active = overrides.active ?? true;
  return {
    userName,
    externalId: overrides.externalId ?? null,
    email,
    firstName,
    lastName,
    active,
    attributes: overrides.attributes ?? {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      name: { givenName: firstName, familyName: lastName },
      emails: email ? [{ value: email, primary: true, type: 'work' }] : [],
      active,
    },
    customAttributes: overrides.customAttributes ?? {},
  };
}

export function groupFields(displayName: string): DirectoryGroupFields {
  return {
    displayName,
    externalId: null,
    attributes: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName },
  };
}

/** The organization's memberships (rows), with their role slugs, oldest first. */
export async function membershipsOf(w: DirectoryWorld) {
  const list = await w.env.caller.organizationMemberships.list({ organization_id: w.organizationId, limit: 100 });
  return list.data;
}

/** The membership of the user in the world's organization, as the API answers it. */
export async function membershipOfUser(w: DirectoryWorld, userId: string) {
  return (await membershipsOf(w)).find((m) => m.user_id === userId);
}

/** The environment's users whose e-mail is this one, case-insensitively. */
export async function usersWithEmail(w: DirectoryWorld, email: string) {
  return w.env.deps.db
    .select()
    .from(users)
    .where(and(eq(users.environmentId, w.env.environmentId), eq(sql`lower(${users.email})`, email.toLowerCase())));
}

export async function directoryUserRow(w: DirectoryWorld, id: string) {
  const [row] = await w.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.id, id));
  return row;
}

export async function groupRows(w: DirectoryWorld) {
  return w.env.deps.db.select().from(directoryGroups).where(eq(directoryGroups.directoryId, w.directory.id));
}

/** Every stored event of the world's environment, oldest first. */
export async function eventsOf(w: DirectoryWorld) {
  return w.env.deps.db
    .select()
    .from(events)
    .where(eq(events.environmentId, w.env.environmentId))
    .orderBy(asc(events.id));
}

/** The names of the events stored after the first `after`. */
export async function eventNamesAfter(w: DirectoryWorld, after: number): Promise<string[]> {
  return (await eventsOf(w)).slice(after).map((e) => e.event);
}

/** A session of the user in the organization (a client token issued), and its id. */
export async function signIn(w: DirectoryWorld, userId: string): Promise<string> {
  return (await signInWithToken(w, userId)).sid;
}

export async function signInWithToken(w: DirectoryWorld, userId: string): Promise<{ sid: string; token: string }> {
  const { token } = await w.env.caller.clientTokens.create({ organization_id: w.organizationId, user_id: userId });
  return { sid: String(decodeJwt(token).sid), token };
}

/** Whether every client surface accepts the client token now (the check they all call). */
export async function tokenAccepted(w: DirectoryWorld, token: string): Promise<boolean> {
  const env = { id: w.env.environmentId, clientId: w.env.clientId };
  return (await verifyClientToken(w.env.deps, env, token)) !== null;
}

export async function sessionRow(w: DirectoryWorld, id: string) {
  const [row] = await w.env.deps.db.select().from(sessions).where(eq(sessions.id, id));
  return row;
}

export async function membershipRows(w: DirectoryWorld) {
  return w.env.deps.db
    .select()
    .from(organizationMemberships)
    .where(eq(organizationMemberships.organizationId, w.organizationId));
}
