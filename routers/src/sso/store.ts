import {
  builtOnce,
  coalesced,
  type Db,
  type PageParams,
  paginate,
  redirectUris,
  renderedOnce,
  type SsoAuthorizationState,
  samlAssertionIds,
  ssoAccessTokens,
  ssoAuthorizations,
  ssoCodes,
  ssoProfiles,
} from '@atrium/db';
import { and, desc, eq, gt, inArray, isNull, lt, lte, sql } from 'drizzle-orm';
import { loadScoped, scopedId } from '../common/store.ts';
import {
  type ConnectionRow,
  connectionColumns,
  joinConnectionAs,
  joinedConnection,
  selectConnectionsWithEnvironment,
} from '../connections/store.ts';
import { environmentInfoColumns, environmentsOfClientIds, joinedEnvironment } from '../environments/store.ts';
import type { EnvironmentInfo } from '../kernel/scope.ts';
import { roleSlugsOfMember } from '../organization-memberships/store.ts';

// Every query of single sign-on: redirect URIs, authorizations in flight, profiles, one-use
// codes, access tokens, and the expiry of all of them (the retention worker).

export type RedirectUriRow = typeof redirectUris.$inferSelect;
export type SsoAuthorizationRow = typeof ssoAuthorizations.$inferSelect;
export type NewSsoAuthorization = typeof ssoAuthorizations.$inferInsert;
export type SsoProfileRow = typeof ssoProfiles.$inferSelect;
export type NewSsoProfile = typeof ssoProfiles.$inferInsert;

/** The environment of an OAuth-style `client_id` (an unauthenticated browser request names it). */
export async function environmentOfClientId(db: Db, clientId: string): Promise<EnvironmentInfo | undefined> {
  const [row] = await environmentsOfClientIds(db, [clientId]);
  return row;
}

// Redirect URIs ----------------------------------------------------------------------------

export function pageOfRedirectUris(db: Db, environmentId: string, params: PageParams) {
  return paginate(
    params,
    redirectUris.id,
    (q) =>
      db
        .select()
        .from(redirectUris)
        .where(and(eq(redirectUris.environmentId, environmentId), q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
}

export function redirectUrisOf(db: Db, environmentId: string): Promise<RedirectUriRow[]> {
  return db.select().from(redirectUris).where(eq(redirectUris.environmentId, environmentId)).orderBy(redirectUris.id);
}

export async function findRedirectUri(db: Db, environmentId: string, uri: string): Promise<RedirectUriRow | undefined> {
  const [row] = await db
    .select()
    .from(redirectUris)
    .where(and(eq(redirectUris.environmentId, environmentId), eq(redirectUris.uri, uri)))
    .limit(1);
  return row;
}

export function loadRedirectUri(db: Db, environmentId: string, id: string): Promise<RedirectUriRow> {
  return loadScoped(db, redirectUris, 'redirect_uri', environmentId, id);
}

/** Inserts the URI unless the environment has it already (then undefined). */
export async function insertRedirectUri(
  tx: Db,
  values: typeof redirectUris.$inferInsert,
): Promise<RedirectUriRow | undefined> {
  const [row] = await tx.insert(redirectUris).values(values).onConflictDoNothing().returning();
  return row;
}

/** Clears the default flag of every other URI of the environment (one default at most). */
export async function clearDefaultRedirectUris(tx: Db, environmentId: string, exceptId: string, now: Date) {
  await tx
    .update(redirectUris)
    .set({ isDefault: false, updatedAt: now })
    .where(
      and(
        eq(redirectUris.environmentId, environmentId),
        eq(redirectUris.isDefault, true),
        sql`${redirectUris.id} <> ${exceptId}`,
      ),
    );
}

export async function setRedirectUriDefault(
  tx: Db,
  id: string,
  isDefault: boolean,
  now: Date,
): Promise<RedirectUriRow> {
  const [row] = await tx
    .update(redirectUris)
    .set({ isDefault, updatedAt: now })
    .where(eq(redirectUris.id, id))
    .returning();
  return row as RedirectUriRow;
}

export async function deleteRedirectUriRow(
  tx: Db,
  environmentId: string,
  id: string,
): Promise<RedirectUriRow | undefined> {
  const [row] = await tx
    .delete(redirectUris)
    .where(scopedId(redirectUris, environmentId, id))
    .returning();
  return row;
}

/** Serialises writes of one environment's redirect URIs (its default flag). */
export async function lockRedirectUrisOf(tx: Db, environmentId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`redirect_uris:${environmentId}`}))`);
}

// A connection with its authorization (connections/store.ts owns the table) -------------------

/**
 * The connection of a public URL (ACS, OIDC callback) with its environment and, when
 * `authorizationId` names one of this connection's authorizations, that authorization: one
 * statement where there were two reads (the browser's answer needs both before it verifies).
 */
export async function connectionAndAuthorization(
  db: Db,
  connectionId: string,
  authorizationId: string | null,
): Promise<
  { connection: ConnectionRow; env: EnvironmentInfo; authorization: SsoAuthorizationRow | undefined } | undefined
> {
  const [row] = await connectionWithAuthorization(db, { id: connectionId, authorization: authorizationId ?? '' });
  return row && { connection: row.connection, env: row.env, authorization: row.authorization ?? undefined };
}
const connectionWithAuthorization = builtOnce(['id', 'authorization'] as const, (db, v) =>
  selectConnectionsWithEnvironment(db, { authorization: ssoAuthorizations })
    .leftJoin(
      ssoAuthorizations,
      and(
        eq(ssoAuthorizations.id, v.authorization),
        eq(ssoAuthorizations.environmentId, connectionColumns.environmentId),
        eq(ssoAuthorizations.connectionId, connectionColumns.id),
      ),
    )
    .where(eq(connectionColumns.id, v.id))
    .limit(1),
);

// The sign-in's statements (completeSignIn, in its transaction) are built once (`builtOnce`):
// Drizzle building them on every ACS POST cost more CPU than PostgreSQL running them.

// Authorizations -----------------------------------------------------------------------------

export async function insertAuthorization(tx: Db, values: NewSsoAuthorization): Promise<SsoAuthorizationRow> {
  const [row] = await tx.insert(ssoAuthorizations).values(values).returning();
  return row as SsoAuthorizationRow;
}

export async function setAuthorizationProtocolState(
  tx: Db,
  id: string,
  values: { samlRequestId?: string; oidcNonce?: string; oidcCodeVerifierSealed?: string },
): Promise<void> {
  await tx.update(ssoAuthorizations).set(values).where(eq(ssoAuthorizations.id, id));
}

const authorizationOf = (db: Db, v: Record<'env' | 'id', ReturnType<typeof sql.placeholder>>) =>
  db
    .select()
    .from(ssoAuthorizations)
    .where(and(eq(ssoAuthorizations.environmentId, v.env), eq(ssoAuthorizations.id, v.id)))
    .limit(1);
const authorizationRead = builtOnce(['env', 'id'] as const, authorizationOf);
const authorizationHeld = builtOnce(['env', 'id'] as const, (db, v) => authorizationOf(db, v).for('update'));

/** The authorization of the environment, optionally held FOR UPDATE. */
export async function findAuthorization(
  db: Db,
  environmentId: string,
  id: string,
  lock = false,
): Promise<SsoAuthorizationRow | undefined> {
  const [row] = await (lock ? authorizationHeld : authorizationRead)(db, { env: environmentId, id });
  return row;
}

/** Moves a `started` authorization to its outcome; undefined if it was no longer `started`. */
export async function finishAuthorization(
  tx: Db,
  id: string,
  state: 'successful' | 'failed' | 'timed_out',
  failureReason: string | null,
  now: Date,
): Promise<SsoAuthorizationRow | undefined> {
  const [row] = await finishStarted(tx, { id, state, failureReason, now });
  return row;
}
/**
 * Marks the authorization `successful` if it is the connection's, still `started` and unexpired at
 * `now` (its row locked until commit, as `FOR UPDATE` would); undefined otherwise.
 */
export async function completeAuthorization(
  tx: Db,
  environmentId: string,
  connectionId: string,
  id: string,
  now: Date,
): Promise<SsoAuthorizationRow | undefined> {
  const [row] = await completeStarted(tx, { env: environmentId, connection: connectionId, id, now: now.toISOString() });
  return row;
}
const completeStarted = builtOnce(['env', 'connection', 'id', 'now'] as const, (db, v) =>
  db
    .update(ssoAuthorizations)
    .set({ state: 'successful', failureReason: null, consumedAt: sql`${v.now}::timestamptz` })
    .where(
      and(
        eq(ssoAuthorizations.environmentId, v.env),
        eq(ssoAuthorizations.id, v.id),
        eq(ssoAuthorizations.connectionId, v.connection),
        eq(ssoAuthorizations.state, 'started'),
        gt(ssoAuthorizations.expiresAt, sql`${v.now}::timestamptz`),
      ),
    )
    .returning(),
);
const finishStarted = builtOnce(['id', 'state', 'failureReason', 'now'] as const, (db, v) =>
  db
    .update(ssoAuthorizations)
    .set({ state: v.state as never, failureReason: v.failureReason as never, consumedAt: v.now as never })
    .where(and(eq(ssoAuthorizations.id, v.id), eq(ssoAuthorizations.state, 'started')))
    .returning(),
);

// Users, memberships, profiles -----------------------------------------------------------------

const profileOfIdpId = builtOnce(['connection', 'idpId'] as const, (db, v) =>
  db
    .select()
    .from(ssoProfiles)
    .where(and(eq(ssoProfiles.connectionId, v.connection), eq(ssoProfiles.idpId, v.idpId)))
    .limit(1),
);

export async function findProfile(db: Db, connectionId: string, idpId: string): Promise<SsoProfileRow | undefined> {
  const [row] = await profileOfIdpId(db, { connection: connectionId, idpId });
  return row;
}

export async function profileById(db: Db, environmentId: string, id: string): Promise<SsoProfileRow | undefined> {
  const [row] = await db
    .select()
    .from(ssoProfiles)
    .where(scopedId(ssoProfiles, environmentId, id))
    .limit(1);
  return row;
}

/** Inserts or refreshes the profile of (connection, idp_id). */
export async function upsertProfile(tx: Db, values: NewSsoProfile): Promise<SsoProfileRow> {
  const [row] = await tx
    .insert(ssoProfiles)
    .values(values)
    .onConflictDoUpdate({
      target: [ssoProfiles.connectionId, ssoProfiles.idpId],
      set: {
        organizationId: values.organizationId,
        userId: values.userId,
        email: values.email,
        firstName: values.firstName,
        lastName: values.lastName,
        name: values.name,
        groups: values.groups,
        customAttributes: values.customAttributes,
        rawAttributes: values.rawAttributes,
        updatedAt: values.updatedAt,
      },
    })
    .returning();
  return row as SsoProfileRow;
}

// Codes and access tokens --------------------------------------------------------------------

export async function insertCode(tx: Db, values: typeof ssoCodes.$inferInsert): Promise<void> {
  await codeInsert(tx, values as Record<CodeColumn, unknown>);
}
const CODE_COLUMNS = [
  'codeHash',
  'environmentId',
  'profileId',
  'redirectUri',
  'codeChallenge',
  'expiresAt',
  'createdAt',
] as const;
type CodeColumn = (typeof CODE_COLUMNS)[number];
// Every column given (a null challenge is a text null, which the column encodes as it is).
const codeInsert = builtOnce(CODE_COLUMNS, (db, v) => db.insert(ssoCodes).values(v as never));

/**
 * A profile as the wire shows it: its row's fields, its connection's type, and the role slugs of
 * its user's membership of its organization (null without one).
 */
export interface ProfileView {
  id: string;
  idp_id: string;
  organization_id: string | null;
  connection_id: string;
  connection_type: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  name: string | null;
  groups: string[] | null;
  custom_attributes: Record<string, unknown>;
  raw_attributes: Record<string, unknown>;
  role_slugs: string[] | null;
}

/** A jsonb value as the driver hands it: parsed already (PGlite) or as text (postgres.js). */
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** The driver's row of `profileViewColumns`, with its jsonb columns parsed. */
function toProfileView(row: ProfileView): ProfileView {
  row.groups = row.groups === null ? null : json(row.groups);
  row.custom_attributes = json(row.custom_attributes);
  row.raw_attributes = json(row.raw_attributes);
  row.role_slugs = row.role_slugs === null ? null : json(row.role_slugs);
  return row;
}

/**
 * The columns of a `ProfileView` over `sso_profiles p` joined with its connection `c`: the role
 * slugs are those of the user's membership of the organization (roleSlugsOfMember), none without one.
 */
const profileViewColumns = sql`p.id, p.idp_id, p.organization_id, p.connection_id, c.connection_type, p.email,
  p.first_name, p.last_name, p.name, p.groups, p.custom_attributes, p.raw_attributes,
  ${roleSlugsOfMember(sql`p.environment_id`, sql`p.user_id`, sql`p.organization_id`)} as role_slugs`;

/**
 * `POST /sso/token` in one statement (no transaction): spends the code if it is unused, unexpired
 * and its PKCE challenge is met, stores the access token for its profile, and returns the profile
 * view. Nothing is written when the code is refused (unknown in the environment, spent, expired,
 * challenge not met). Two exchanges of one code at once: the second UPDATE waits for the first and
 * then finds it used. Rendered once and sent prepared: it runs on every exchange.
 */
const spendCodeStatement = renderedOnce(
  ['env', 'code', 'challenge', 'token', 'now', 'expires'] as const,
  (v) => sql`with spent as (
      update ${ssoCodes} set used_at = ${v.now}::timestamptz
      where code_hash = ${v.code} and environment_id = ${v.env}
        and used_at is null and expires_at > ${v.now}::timestamptz
        and code_challenge is not distinct from ${v.challenge}::text
      returning profile_id
    ), stored as (
      insert into ${ssoAccessTokens} (token_hash, environment_id, profile_id, expires_at, created_at)
      select ${v.token}, ${v.env}, profile_id, ${v.expires}::timestamptz, ${v.now}::timestamptz from spent
      returning profile_id
    )
    select ${profileViewColumns}
    from stored
    join ${ssoProfiles} p on p.id = stored.profile_id and p.environment_id = ${v.env}
    ${joinConnectionAs('c', sql`p.connection_id`, sql`p.environment_id`)}`,
);

const SPEND_BATCH_VALUES = ['envs', 'codes', 'challenges', 'tokens', 'nows', 'expires'] as const;
/**
 * `spendCodeStatement` for many exchanges in one statement: one array per value, each item's
 * ordinal `n` on the rows it answers (none when refused). A code named by several items is spent
 * by the first that meets its conditions only (`distinct on`), so the UPDATE joins each code row
 * once, and its WHERE checks them again on the row it updates (a concurrent spend is seen).
 */
const spendCodesStatement = renderedOnce(SPEND_BATCH_VALUES, (values) => {
  // As insertPlainEvents (audit-logs/store.ts): an array stays one parameter when rendered with its values.
  const v = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, Array.isArray(value) ? sql.param(value) : value]),
  ) as typeof values;
  // The instants go as text arrays (postgres.js sends no timestamptz[]), each element cast.
  return sql`with i as (
      select env, code, challenge, token, now::timestamptz as now, expires::timestamptz as expires, n
      from unnest(${v.envs}::text[], ${v.codes}::text[], ${v.challenges}::text[], ${v.tokens}::text[],
          ${v.nows}::text[], ${v.expires}::text[]) with ordinality
        as i(env, code, challenge, token, now, expires, n)
    ), first as (
      select distinct on (i.code) i.* from i
      join ${ssoCodes} k on k.code_hash = i.code and k.environment_id = i.env
        and k.used_at is null and k.expires_at > i.now and k.code_challenge is not distinct from i.challenge
      order by i.code, i.n
    ), spent as (
      update ${ssoCodes} k set used_at = f.now
      from first f
      where k.code_hash = f.code and k.environment_id = f.env
        and k.used_at is null and k.expires_at > f.now and k.code_challenge is not distinct from f.challenge
      returning f.n, f.env, f.token, f.now, f.expires, k.profile_id
    ), stored as (
      insert into ${ssoAccessTokens} (token_hash, environment_id, profile_id, expires_at, created_at)
      select token, env, profile_id, expires, now from spent
      returning token_hash, environment_id, profile_id
    )
    select s.n, ${profileViewColumns}
    from spent s
    join stored on stored.token_hash = s.token
    join ${ssoProfiles} p on p.id = s.profile_id and p.environment_id = s.env
    ${joinConnectionAs('c', sql`p.connection_id`, sql`p.environment_id`)}`;
});

/** An exchange as `spendCodeForAccessToken` takes it. */
interface CodeSpend {
  environmentId: string;
  codeHash: string;
  /** The S256 of the caller's code_verifier, null without one: it must equal the code's challenge. */
  codeChallenge: string | null;
  tokenHash: string;
  now: Date;
  tokenExpiresAt: Date;
}

/**
 * Concurrent exchanges go together (group commit, `coalesced`): one alone is one
 * `spendCodeStatement`; those arriving while one is in flight go as one `spendCodesStatement`, and
 * each gets its own profile view or undefined. A batch that fails is retried exchange by exchange.
 */
const spendCoalesced = coalesced<CodeSpend, ProfileView | undefined>({
  async one(db, input) {
    const [row] = await spendCodeStatement<ProfileView>(db, {
      env: input.environmentId,
      code: input.codeHash,
      challenge: input.codeChallenge,
      token: input.tokenHash,
      now: input.now.toISOString(),
      expires: input.tokenExpiresAt.toISOString(),
    });
    return row && toProfileView(row);
  },
  async many(db, inputs) {
    const rows = await spendCodesStatement<ProfileView & { n: string | number }>(db, {
      envs: inputs.map((e) => e.environmentId),
      codes: inputs.map((e) => e.codeHash),
      challenges: inputs.map((e) => e.codeChallenge),
      tokens: inputs.map((e) => e.tokenHash),
      nows: inputs.map((e) => e.now.toISOString()),
      expires: inputs.map((e) => e.tokenExpiresAt.toISOString()),
    });
    const views: Array<ProfileView | undefined> = inputs.map(() => undefined);
    for (const { n, ...row } of rows) views[Number(n) - 1] = toProfileView(row);
    return views;
  },
  max: 100,
});

/**
 * Spends the code for an access token (`spendCodeStatement`, or `spendCodesStatement` with the
 * exchanges sent meanwhile): the profile view, or undefined when the code was refused (then nothing
 * was written for it). It resolves once the statement that carried it has committed.
 */
export function spendCodeForAccessToken(db: Db, input: CodeSpend): Promise<ProfileView | undefined> {
  return spendCoalesced(db, input);
}

/** `GET /sso/profile`'s read: the profile view of an unexpired access token, in one statement. */
const profileOfTokenStatement = renderedOnce(
  ['token', 'now'] as const,
  (v) => sql`select ${profileViewColumns}
    from ${ssoAccessTokens} t
    join ${ssoProfiles} p on p.id = t.profile_id and p.environment_id = t.environment_id
    ${joinConnectionAs('c', sql`p.connection_id`, sql`p.environment_id`)}
    where t.token_hash = ${v.token} and t.expires_at > ${v.now}::timestamptz`,
);

/** The profile view of an access token that has not expired at `now`, if any. */
export async function profileOfAccessTokenHash(db: Db, tokenHash: string, now: Date): Promise<ProfileView | undefined> {
  const [row] = await profileOfTokenStatement<ProfileView>(db, { token: tokenHash, now: now.toISOString() });
  return row && toProfileView(row);
}

/** A code still to be spent (unused, unexpired), read only to say why an exchange was refused. */
export async function unspentCode(db: Db, environmentId: string, codeHash: string, now: Date) {
  const [row] = await db
    .select({ codeChallenge: ssoCodes.codeChallenge })
    .from(ssoCodes)
    .where(
      and(
        eq(ssoCodes.codeHash, codeHash),
        eq(ssoCodes.environmentId, environmentId),
        isNull(ssoCodes.usedAt),
        gt(ssoCodes.expiresAt, now),
      ),
    )
    .limit(1);
  return row;
}

/** Forgets every access token of a profile (its sign-out). */
export async function deleteAccessTokensOfProfile(tx: Db, profileId: string): Promise<void> {
  await tx.delete(ssoAccessTokens).where(eq(ssoAccessTokens.profileId, profileId));
}

// Expiry (the retention worker) --------------------------------------------------------------

/**
 * `started` authorizations past their expiry, at most `limit`, held (others skip them), with
 * their connection's organization and their environment (for `authentication.sso_timed_out`).
 */
export function lockExpiredAuthorizations(tx: Db, now: Date, limit: number) {
  return tx
    .select({
      id: ssoAuthorizations.id,
      connectionId: ssoAuthorizations.connectionId,
      loginHint: ssoAuthorizations.loginHint,
      ipAddress: ssoAuthorizations.ipAddress,
      userAgent: ssoAuthorizations.userAgent,
      organizationId: connectionColumns.organizationId,
      env: environmentInfoColumns,
    })
    .from(ssoAuthorizations)
    .innerJoin(...joinedConnection(ssoAuthorizations.connectionId))
    .innerJoin(...joinedEnvironment(ssoAuthorizations.environmentId))
    .where(and(eq(ssoAuthorizations.state, 'started'), lte(ssoAuthorizations.expiresAt, now)))
    .orderBy(ssoAuthorizations.expiresAt)
    .limit(limit)
    .for('update', { of: ssoAuthorizations, skipLocked: true });
}

export async function markTimedOut(tx: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(ssoAuthorizations).set({ state: 'timed_out' }).where(inArray(ssoAuthorizations.id, ids));
}

/** Deletes expired codes, access tokens and assertion ids, and finished authorizations older than `before`. */
export async function deleteExpiredSsoRows(db: Db, now: Date, authorizationsBefore: Date) {
  const codes = await db.delete(ssoCodes).where(lt(ssoCodes.expiresAt, now)).returning({ h: ssoCodes.codeHash });
  const tokens = await db
    .delete(ssoAccessTokens)
    .where(lt(ssoAccessTokens.expiresAt, now))
    .returning({ h: ssoAccessTokens.tokenHash });
  const assertions = await db
    .delete(samlAssertionIds)
    .where(lt(samlAssertionIds.expiresAt, now))
    .returning({ id: samlAssertionIds.assertionId });
  const authorizations = await db
    .delete(ssoAuthorizations)
    .where(and(lt(ssoAuthorizations.expiresAt, authorizationsBefore), sql`${ssoAuthorizations.state} <> 'started'`))
    .returning({ id: ssoAuthorizations.id });
  return {
    codes: codes.length,
    accessTokens: tokens.length,
    assertionIds: assertions.length,
    authorizations: authorizations.length,
  };
}

export interface LastSession {
  id: string;
  connectionId: string;
  state: SsoAuthorizationState;
  createdAt: Date;
}

/** The newest sign-in attempt (`sso_authorizations` row) of each connection that has one. */
export async function lastSessionsOf(
  db: Db,
  environmentId: string,
  connectionIds: string[],
): Promise<Map<string, LastSession>> {
  if (connectionIds.length === 0) return new Map();
  const rows = await db
    .selectDistinctOn([ssoAuthorizations.connectionId], {
      id: ssoAuthorizations.id,
      connectionId: ssoAuthorizations.connectionId,
      state: ssoAuthorizations.state,
      createdAt: ssoAuthorizations.createdAt,
    })
    .from(ssoAuthorizations)
    .where(
      and(eq(ssoAuthorizations.environmentId, environmentId), inArray(ssoAuthorizations.connectionId, connectionIds)),
    )
    .orderBy(ssoAuthorizations.connectionId, desc(ssoAuthorizations.id));
  return new Map(rows.map((row) => [row.connectionId, row]));
}
