/**
 * The SCIM create floor (bench/README.md, "Floors (issue #35)", and "Directory sync (issue #36)"):
 * `POST /scim/v2/<directory>/Users` with the least work Atrium's create must do on its stack, and
 * the same 201 JSON (ids and timestamps aside). node:http; the bearer token hashed (SHA-256) on
 * every request and its directory looked up once by that hash, then cached (Atrium's tokenCache);
 * the body parsed and read as Atrium reads a SCIM User; then ONE statement of data-modifying CTEs
 * that keeps every guarantee of Atrium's create: the user inserted or linked by e-mail, an active
 * directory-managed membership with the environment's default role, the directory user with its
 * SCIM resource, its place in the directory's quota (16 shards, as routers/src/directories/quota.ts),
 * the events (`user.created` when a user was made, `organization_membership.created`,
 * `dsync.user.created`), `last_sync_at` at most once a second, and 409 `uniqueness` from the indexes.
 * A failure anywhere aborts the one statement, so nothing of it is stored (a transaction's guarantee).
 * JSON goes out as text cast to jsonb (`::text::jsonb`): a parameter typed jsonb would make postgres.js
 * encode the string again (Drizzle's client, Atrium's, sends it as text).
 *
 * Started by bench/scim.ts as its own process, with PORT and DATABASE_URL in its environment.
 * Left out, as once-per-directory work: the `dsync.activated` event of a directory's first write
 * (its state is set `linked` here all the same). A membership that exists already (a user linked by
 * e-mail who is a member of the organization) is kept as it is; Atrium reactivates an inactive one.
 * No rate limit, as in the other floors (Atrium counts each SCIM call in its limiter).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@atrium/db';
import postgres from 'postgres';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

/** Atrium's statement pool and connection settings (db/src/client.ts), as floors/common.ts. */
const sql = postgres(databaseUrl, {
  max: 2,
  prepare: true,
  onnotice: () => {},
  connection: { application_name: 'atrium-floor', timezone: 'UTC', plan_cache_mode: 'force_generic_plan' },
});

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const SERVER_OWNED = new Set(['id', 'meta', 'password', 'groups', '__proto__']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Atrium's default quota of users per directory, in 16 shards (routers/src/directories/quota.ts). */
const QUOTA = 100_000;
const SHARDS = 16;
const shareOf = (shard: number) => Math.floor(QUOTA / SHARDS) + (shard < QUOTA % SHARDS ? 1 : 0);
/** `last_sync_at`'s resolution (routers/src/directories/sync.ts). */
const SYNC_RESOLUTION_MS = 1_000;

interface Directory {
  id: string;
  environmentId: string;
  organizationId: string;
  state: string;
  touched: number;
}

/** Directories by their token's SHA-256, read once each (Atrium caches them by the same key). */
const directories = new Map<string, Directory>();

async function directoryOf(req: IncomingMessage, pathDirectory: string): Promise<Directory | undefined> {
  const header = req.headers.authorization;
  if (!header?.startsWith('Bearer ')) return undefined;
  const secret = header.slice(7);
  if (!/^scim_[0-9A-Za-z]{40}$/.test(secret)) return undefined;
  const hash = createHash('sha256').update(secret).digest('hex');
  let directory = directories.get(hash);
  if (!directory) {
    const [row] = await sql<{ id: string; environment_id: string; organization_id: string; state: string }[]>`
      select id, environment_id, organization_id, state from directories where token_hash = ${hash}`;
    if (!row || row.state === 'deleting') return undefined;
    directory = {
      id: row.id,
      environmentId: row.environment_id,
      organizationId: row.organization_id,
      state: row.state,
      touched: 0,
    };
    directories.set(hash, directory);
  }
  return directory.id === pathDirectory ? directory : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly scimType: string | undefined,
    detail: string,
  ) {
    super(detail);
  }
}
const invalid = (detail: string) => new Refusal(400, 'invalidValue', detail);

function optionalString(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(`'${name}' must be a string.`);
  if (value.length > 1024) throw invalid(`'${name}' is longer than 1024 characters.`);
  return value === '' ? null : value;
}

function booleanOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'True') return true;
  if (value === 'false' || value === 'False') return false;
  return undefined;
}

/** A SCIM User read as Atrium reads it (routers/src/scim/users.ts `userFieldsOf`), its checks included. */
function fieldsOf(body: unknown) {
  if (!isRecord(body)) throw invalid('The request body must be a JSON object.');
  const attributes: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!SERVER_OWNED.has(key)) attributes[key] = body[key];
  if (attributes.active !== undefined && attributes.active !== null) {
    const active = booleanOf(attributes.active);
    if (active === undefined) throw invalid("'active' must be a boolean.");
    attributes.active = active;
  }
  if (attributes.emails !== undefined && attributes.emails !== null) {
    if (!Array.isArray(attributes.emails)) throw invalid("'emails' must be an array.");
    attributes.emails = attributes.emails.map((email: unknown) => {
      if (!isRecord(email)) throw invalid("Each of 'emails' must be an object.");
      if (email.value !== undefined && typeof email.value !== 'string')
        throw invalid("'emails.value' must be a string.");
      if (email.primary === undefined) return email;
      const primary = booleanOf(email.primary);
      if (primary === undefined) throw invalid("'emails.primary' must be a boolean.");
      return { ...email, primary };
    });
  }
  if (attributes.name !== undefined && attributes.name !== null && !isRecord(attributes.name)) {
    throw invalid("'name' must be an object.");
  }
  const enterprise = attributes[ENTERPRISE_SCHEMA];
  if (enterprise !== undefined && enterprise !== null && !isRecord(enterprise)) {
    throw invalid(`'${ENTERPRISE_SCHEMA}' must be an object.`);
  }
  if (!Array.isArray(attributes.schemas))
    attributes.schemas = enterprise ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA];
  const userName = typeof attributes.userName === 'string' ? attributes.userName.trim() : '';
  if (userName === '') throw invalid("'userName' is required.");
  if (userName.length > 1024) throw invalid("'userName' is longer than 1024 characters.");
  const name = isRecord(attributes.name) ? attributes.name : {};
  const emails = Array.isArray(attributes.emails)
    ? (attributes.emails as Record<string, unknown>[]).filter((e) => isRecord(e) && typeof e.value === 'string')
    : [];
  const chosen =
    emails.find((e) => e.primary === true) ??
    emails.find((e) => typeof e.type === 'string' && e.type.toLowerCase() === 'work') ??
    emails[0];
  const value = typeof chosen?.value === 'string' ? chosen.value.trim() : '';
  const email =
    value !== ''
      ? value.length > 1024
        ? null
        : value.toLowerCase()
      : EMAIL.test(userName)
        ? userName.toLowerCase()
        : null;
  const custom: Record<string, unknown> = {};
  const text = (source: unknown, key: string) =>
    isRecord(source) && typeof source[key] === 'string' && source[key] !== '' ? (source[key] as string) : undefined;
  for (const [key, value] of [
    ['department', text(enterprise, 'department')],
    ['job_title', text(attributes, 'title')],
    ['employee_type', text(attributes, 'userType')],
    ['cost_center', text(enterprise, 'costCenter')],
    ['division', text(enterprise, 'division')],
    ['organization', text(enterprise, 'organization')],
    ['employee_number', text(enterprise, 'employeeNumber')],
  ] as const) {
    if (value !== undefined) custom[key] = value;
  }
  const manager = isRecord(enterprise) ? enterprise.manager : undefined;
  const managerValue = typeof manager === 'string' ? manager : text(manager, 'value');
  const managerEmail = text(manager, 'email') ?? (managerValue && EMAIL.test(managerValue) ? managerValue : undefined);
  if (managerEmail !== undefined) custom.manager_email = managerEmail;
  if (managerValue && !EMAIL.test(managerValue)) custom.manager_id = managerValue;
  return {
    userName,
    externalId: optionalString(attributes.externalId, 'externalId'),
    email,
    firstName: optionalString(name.givenName, 'name.givenName'),
    lastName: optionalString(name.familyName, 'name.familyName'),
    active: attributes.active === undefined || attributes.active === null ? true : attributes.active === true,
    attributes,
    custom,
  };
}

/** An e-mail a user may have (Atrium's `provisionableEmail`: z.email() after trimming, at most 320). */
const provisionable = (email: string | null) =>
  email !== null &&
  email.length <= 320 &&
  /^(?!\.)(?!.*\.\.)([\w'+\-.]*)[\w+-]@([\w][\w-]*\.)+[A-Za-z]{2,}$/.test(email)
    ? email
    : null;

/**
 * The create in one statement. A quota shard at its share, or not made yet, makes the last select
 * divide by zero: the statement fails, nothing of it stays, and the caller tries the next shard.
 */
type CreateKey =
  | 'env'
  | 'org'
  | 'directory'
  | 'now'
  | 'provision'
  | 'userId'
  | 'membershipId'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'id'
  | 'userName'
  | 'externalId'
  | 'state'
  | 'attributes'
  | 'custom'
  | 'event1'
  | 'event2'
  | 'event3'
  | 'userData'
  | 'directoryUserData'
  | 'touch'
  | 'shard'
  | 'cap';

const create = (v: Record<CreateKey, string | number | boolean | null>) => sql<{ version: number }[]>`
  with dr as (
    select id, slug from roles where environment_id = ${v.env} and organization_id is null and is_default
  ), u as (
    insert into users (id, environment_id, email, first_name, last_name, created_at, updated_at)
    select ${v.userId}, ${v.env}, ${v.email}, ${v.firstName}, ${v.lastName}, ${v.now}::timestamptz, ${v.now}::timestamptz
    where ${v.provision}::boolean
    on conflict (environment_id, lower(email)) do update set email = users.email
    returning id, (xmax = 0) as created
  ), m as (
    insert into organization_memberships (id, environment_id, user_id, organization_id, status, directory_managed,
      custom_attributes, created_at, updated_at)
    select ${v.membershipId}, ${v.env}, u.id, ${v.org}, 'active', true, '{}'::jsonb, ${v.now}::timestamptz, ${v.now}::timestamptz
    from u
    on conflict (organization_id, user_id) do nothing
    returning id, user_id
  ), r as (
    insert into organization_membership_roles (environment_id, organization_membership_id, role_id, position)
    select ${v.env}, m.id, dr.id, 0 from m, dr
    returning role_id
  ), q as (
    update directory_quota_shards set count = count + 1
    where directory_id = ${v.directory} and kind = 'users' and shard = ${v.shard} and count < ${v.cap}
    returning 1
  ), du as (
    insert into directory_users (id, environment_id, directory_id, organization_id, user_name, external_id, email,
      first_name, last_name, state, attributes, custom_attributes, user_id, created_at, updated_at)
    values (${v.id}, ${v.env}, ${v.directory}, ${v.org}, ${v.userName}, ${v.externalId}, ${v.email}, ${v.firstName},
      ${v.lastName}, ${v.state}, ${v.attributes}::text::jsonb, ${v.custom}::text::jsonb, (select id from u),
      ${v.now}::timestamptz, ${v.now}::timestamptz)
    returning version
  ), ev as (
    insert into events (id, environment_id, event, organization_id, data, created_at, fanout_pending)
    select ${v.event1}, ${v.env}, 'user.created', null,
      ${v.userData}::text::jsonb, ${v.now}::timestamptz, true
    from u where u.created
    union all
    select ${v.event2}, ${v.env}, 'organization_membership.created', ${v.org},
      jsonb_build_object('object', 'organization_membership', 'id', m.id, 'user_id', m.user_id,
        'organization_id', ${v.org}::text,
        'organization_name', (select name from organizations where id = ${v.org}),
        'status', 'active', 'directory_managed', true, 'custom_attributes', '{}'::jsonb,
        'role', jsonb_build_object('slug', (select slug from dr)),
        'roles', jsonb_build_array(jsonb_build_object('slug', (select slug from dr))),
        'created_at', ${v.now}::text, 'updated_at', ${v.now}::text), ${v.now}::timestamptz, true
    from m
    union all
    select ${v.event3}, ${v.env}, 'dsync.user.created', ${v.org}, ${v.directoryUserData}::text::jsonb, ${v.now}::timestamptz, true
  ), touched as (
    update directories set last_sync_at = ${v.now}::timestamptz,
      state = case when state = 'unlinked' then 'linked' else state end
    where id = ${v.directory} and ${v.touch}::boolean
  )
  select (select version from du) as version, 1 / (select count(*)::int from q) as placed`;

/** Makes shard `shard` of the directory's user counter if it is not there (its first use, as Atrium's). */
const makeShard = (directory: Directory, shard: number) => sql`
  insert into directory_quota_shards (environment_id, directory_id, kind, shard, count)
  values (${directory.environmentId}, ${directory.id}, 'users', ${shard}, 0) on conflict do nothing returning 1`;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/scim+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

const refuse = (res: ServerResponse, status: number, scimType: string | undefined, detail: string) =>
  send(res, status, { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail });

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalidSyntax', 'The request body is not JSON.');
  }
}

async function createUser(req: IncomingMessage, res: ServerResponse, directory: Directory): Promise<void> {
  const fields = fieldsOf(await readBody(req));
  const email = fields.active ? provisionable(fields.email) : null;
  const at = new Date();
  const now = at.toISOString();
  const id = newId('directoryUser');
  const userId = newId('user');
  const [event1, event2, event3] = [newId('event'), newId('event'), newId('event')];
  const touch = at.getTime() - directory.touched >= SYNC_RESOLUTION_MS;
  const fullName = [fields.firstName, fields.lastName].filter(Boolean).join(' ');
  const state = fields.active ? 'active' : 'inactive';
  const title = fields.attributes.title;
  const base = {
    env: directory.environmentId,
    org: directory.organizationId,
    directory: directory.id,
    now,
    provision: email !== null,
    userId,
    membershipId: newId('organizationMembership'),
    email: fields.email,
    firstName: fields.firstName,
    lastName: fields.lastName,
    id,
    userName: fields.userName,
    externalId: fields.externalId,
    state,
    attributes: JSON.stringify(fields.attributes),
    custom: JSON.stringify(fields.custom),
    event1,
    event2,
    event3,
    // The user as the API shows it (`toUser`): recorded only when it was made, so with this id.
    userData: JSON.stringify({
      object: 'user',
      id: userId,
      email,
      email_verified: false,
      name: fullName === '' ? null : fullName,
      first_name: fields.firstName,
      last_name: fields.lastName,
      profile_picture_url: null,
      last_sign_in_at: null,
      locale: null,
      external_id: null,
      metadata: {},
      created_at: now,
      updated_at: now,
    }),
    // The directory user as the API shows it (`toDirectoryUser` less its groups).
    directoryUserData: JSON.stringify({
      object: 'directory_user',
      id,
      directory_id: directory.id,
      organization_id: directory.organizationId,
      idp_id: fields.externalId ?? id,
      email: fields.email,
      first_name: fields.firstName,
      last_name: fields.lastName,
      name: fullName === '' ? null : fullName,
      emails: (Array.isArray(fields.attributes.emails) ? (fields.attributes.emails as unknown[]) : [])
        .filter(isRecord)
        .map((e) => ({
          value: typeof e.value === 'string' ? e.value : null,
          ...(typeof e.primary === 'boolean' ? { primary: e.primary } : {}),
          ...(typeof e.type === 'string' ? { type: e.type } : {}),
        })),
      job_title: typeof title === 'string' ? title : null,
      username: fields.userName,
      state,
      raw_attributes: fields.attributes,
      custom_attributes: fields.custom,
      created_at: now,
      updated_at: now,
    }),
    touch,
  };
  let version: number | undefined;
  const first = Math.floor(Math.random() * SHARDS);
  for (let i = 0; i < SHARDS && version === undefined; i++) {
    const shard = (first + i) % SHARDS;
    try {
      [{ version } = { version: 1 }] = await create({ ...base, shard, cap: shareOf(shard) });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === '23505') {
        return refuse(res, 409, 'uniqueness', 'A user with this userName or externalId exists in the directory.');
      }
      if (code !== '22012') throw error;
      // Not placed: the shard was full (try the next) or is not made yet (make it, try it again).
      if ((await makeShard(directory, shard)).length > 0) i -= 1;
    }
  }
  if (version === undefined) return refuse(res, 403, undefined, 'The directory holds its quota of users.');
  if (touch) {
    directory.touched = at.getTime();
    directory.state = 'linked';
  }
  const { id: _id, meta: _meta, groups: _groups, ...attributes } = fields.attributes;
  const location = `http://${req.headers.host}/scim/v2/${directory.id}/Users/${id}`;
  const etag = `W/"${version}"`;
  const user: Record<string, unknown> = {
    ...attributes,
    schemas: Array.isArray(attributes.schemas) ? attributes.schemas : [USER_SCHEMA],
    id,
    externalId: fields.externalId,
    userName: fields.userName,
    active: fields.active,
    meta: { resourceType: 'User', created: now, lastModified: now, location, version: etag },
  };
  if (fields.externalId === null) delete user.externalId;
  send(res, 201, user, { ETag: etag, Location: location });
}

const USERS = /^\/scim\/v2\/([^/]+)\/Users$/;

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const route = req.method === 'POST' ? USERS.exec(req.url ?? '') : null;
  if (!route) return refuse(res, 404, undefined, 'Not found.');
  directoryOf(req, route[1] as string)
    .then((directory) =>
      directory ? createUser(req, res, directory) : refuse(res, 401, undefined, 'The bearer token is not valid.'),
    )
    .catch((error: unknown) => {
      if (error instanceof Refusal) return refuse(res, error.status, error.scimType, error.message);
      // The load generator closes its connections at the end of a run, some mid-request.
      if (req.destroyed) return;
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      if (!res.headersSent) refuse(res, 500, undefined, 'floor failed');
    });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => void sql.end({ timeout: 1 }).then(() => process.exit(0))));
}
