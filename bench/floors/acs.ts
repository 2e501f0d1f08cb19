/**
 * The ACS floor (bench/README.md, "SSO (issue #37)" and "Floors (issue #35)"): `POST
 * /sso/saml/acs/<connection>` with the least work Atrium's ACS must do on its stack. node:http;
 * the form parsed; one read of the authorization `RelayState` names with its connection (IdP
 * certificates, organization, state); node-saml's `validatePostResponseAsync` configured as Atrium
 * configures it for the connection (certificates, audience, ACS URL, clock skew, `InResponseTo`
 * checked against the authorization's request); the assertion id into the replay cache in its own
 * statement (it must stay remembered even when the sign-in is then refused, as Atrium's); then ONE
 * statement of data-modifying CTEs for the sign-in: the authorization finished once, the
 * organization's domain policy (a verified domain, or profiles outside allowed), the user found by
 * profile or e-mail or made (JIT) with `last_sign_in_at`, an active membership with the default
 * role, the profile upserted, the one-use code (its SHA-256 stored), the connection's
 * `last_sign_in_at`, and the events (`user.created` when made, `organization_membership.created`,
 * `authentication.sso_succeeded`); a 302 to the redirect URI with the code and the app's state.
 *
 * Started by bench/sso.ts as its own process, with PORT, DATABASE_URL and ATRIUM_URL (Atrium's
 * base URL: the SP entity id and ACS URL the responses are addressed to) in its environment.
 * Left out: a refused sign-in's own record (Atrium's `failSignIn`: the authorization marked
 * failed, `authentication.sso_failed`), answered here by a 302 with `error=` alone; the
 * `connection.activated` event of a connection's first sign-in (the bench's is active already).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@atrium/db';
import { type CacheProvider, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import postgres from 'postgres';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const atriumUrl = required('ATRIUM_URL').replace(/\/+$/, '');

/** Atrium's statement pool and connection settings (db/src/client.ts), as floors/common.ts. */
const sql = postgres(required('DATABASE_URL'), {
  max: 2,
  prepare: true,
  onnotice: () => {},
  connection: { application_name: 'atrium-floor', timezone: 'UTC', plan_cache_mode: 'force_generic_plan' },
});

/** Atrium's defaults: 60 s of clock skew, a code valid 10 minutes. */
const SKEW_MS = 60_000;
const CODE_TTL_MS = 600_000;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The attribute names Atrium reads when the connection maps none (routers/src/sso/saml/config.ts). */
const EMAIL_NAMES = [
  'email',
  'Email',
  'emailAddress',
  'mail',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const FIRST_NAMES = [
  'firstName',
  'first_name',
  'givenName',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
];
const LAST_NAMES = [
  'lastName',
  'last_name',
  'surname',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
];

interface Found {
  connection_id: string;
  environment_id: string;
  organization_id: string;
  certificates: { pem: string }[];
  authorization_id: string | null;
  saml_request_id: string | null;
  authorization_state: string | null;
  expires_at: Date | null;
}

/** The connection and the authorization `RelayState` names (one of this connection's), in one read. */
const find = (connection: string, relay: string) => sql<Found[]>`
  select c.id as connection_id, c.environment_id, c.organization_id, c.saml_idp_certificates as certificates,
    a.id as authorization_id, a.saml_request_id, a.state as authorization_state, a.expires_at
  from connections c
  left join sso_authorizations a on a.id = ${relay} and a.connection_id = c.id and a.environment_id = c.environment_id
  where c.id = ${connection} and c.connection_type = 'GenericSAML'`;

function first(profile: Record<string, unknown>, names: string[]): string | undefined {
  for (const name of names) {
    const value = profile[name];
    const one = Array.isArray(value) ? value[0] : value;
    if (typeof one === 'string' && one.trim() !== '') return one.trim();
  }
  return undefined;
}

type SignInKey =
  | 'now'
  | 'env'
  | 'org'
  | 'connection'
  | 'authorization'
  | 'domain'
  | 'idp'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'name'
  | 'raw'
  | 'userId'
  | 'membershipId'
  | 'profileId'
  | 'codeHash'
  | 'expires'
  | 'event1'
  | 'event2'
  | 'event3';

const signIn = (v: Record<SignInKey, string | null>) => sql<
  { issued: number; app_state: string | null; redirect_uri: string | null }[]
>`
  with auth as (
    update sso_authorizations set state = 'successful', consumed_at = ${v.now}::timestamptz
    where id = ${v.authorization} and state = 'started' and expires_at > ${v.now}::timestamptz
    returning redirect_uri, app_state, code_challenge
  ), org as (
    select o.id, o.name, (o.allow_profiles_outside_organization or exists (
        select 1 from organization_domains d where d.environment_id = ${v.env} and d.organization_id = o.id
          and d.domain = ${v.domain} and d.state = 'verified')) as allowed,
      exists (select 1 from organization_domains d where d.environment_id = ${v.env} and d.organization_id = o.id
          and d.domain = ${v.domain} and d.state = 'verified') as verified
    from organizations o where o.id = ${v.org} and o.environment_id = ${v.env} and exists (select 1 from auth)
    for share
  ), dr as (
    select id, slug from roles where environment_id = ${v.env} and organization_id is null and is_default
  ), prof as (
    select id, user_id from sso_profiles where connection_id = ${v.connection} and idp_id = ${v.idp}
  ), known as (
    select id from users where environment_id = ${v.env}
      and (id = (select user_id from prof) or lower(email) = ${v.email})
    order by id = (select user_id from prof) desc limit 1
  ), made as (
    insert into users (id, environment_id, email, email_verified, first_name, last_name, last_sign_in_at,
      created_at, updated_at)
    select ${v.userId}, ${v.env}, ${v.email}, org.verified, ${v.firstName}, ${v.lastName}, ${v.now}::timestamptz,
      ${v.now}::timestamptz, ${v.now}::timestamptz
    from org where org.allowed and not exists (select 1 from known)
    returning id, email_verified
  ), signed as (
    update users set last_sign_in_at = ${v.now}::timestamptz
    where id = (select id from known) and exists (select 1 from org where allowed)
  ), u as (
    select id from known where exists (select 1 from org where allowed) union all select id from made
  ), m as (
    insert into organization_memberships (id, environment_id, user_id, organization_id, status, directory_managed,
      custom_attributes, created_at, updated_at)
    select ${v.membershipId}, ${v.env}, u.id, ${v.org}, 'active', false, '{}'::jsonb, ${v.now}::timestamptz,
      ${v.now}::timestamptz
    from u
    on conflict (organization_id, user_id) do nothing
    returning id, user_id
  ), r as (
    insert into organization_membership_roles (environment_id, organization_membership_id, role_id, position)
    select ${v.env}, m.id, dr.id, 0 from m, dr
    returning role_id
  ), p as (
    insert into sso_profiles (id, environment_id, connection_id, organization_id, user_id, idp_id, email, first_name,
      last_name, name, custom_attributes, raw_attributes, created_at, updated_at)
    select ${v.profileId}, ${v.env}, ${v.connection}, ${v.org}, u.id, ${v.idp}, ${v.email}, ${v.firstName},
      ${v.lastName}, ${v.name}, '{}'::jsonb, ${v.raw}::text::jsonb, ${v.now}::timestamptz, ${v.now}::timestamptz
    from u
    on conflict (connection_id, idp_id) do update set user_id = excluded.user_id, email = excluded.email,
      first_name = excluded.first_name, last_name = excluded.last_name, name = excluded.name,
      raw_attributes = excluded.raw_attributes, updated_at = excluded.updated_at
    returning id
  ), code as (
    insert into sso_codes (code_hash, environment_id, profile_id, redirect_uri, code_challenge, expires_at, created_at)
    select ${v.codeHash}, ${v.env}, p.id, auth.redirect_uri, auth.code_challenge, ${v.expires}::timestamptz,
      ${v.now}::timestamptz
    from p, auth
    returning 1
  ), touched as (
    update connections set last_sign_in_at = ${v.now}::timestamptz, updated_at = ${v.now}::timestamptz
    where id = ${v.connection} and state = 'active' and exists (select 1 from code)
  ), ev as (
    insert into events (id, environment_id, event, organization_id, data, created_at, fanout_pending)
    select ${v.event1}, ${v.env}, 'user.created', null,
      jsonb_build_object('object', 'user', 'id', made.id, 'email', ${v.email}::text, 'email_verified', made.email_verified,
        'name', ${v.name}::text, 'first_name', ${v.firstName}::text, 'last_name', ${v.lastName}::text,
        'profile_picture_url', null, 'last_sign_in_at', null, 'locale', null, 'external_id', null,
        'metadata', '{}'::jsonb, 'created_at', ${v.now}::text, 'updated_at', ${v.now}::text),
      ${v.now}::timestamptz, true
    from made
    union all
    select ${v.event2}, ${v.env}, 'organization_membership.created', ${v.org},
      jsonb_build_object('object', 'organization_membership', 'id', m.id, 'user_id', m.user_id,
        'organization_id', ${v.org}::text, 'organization_name', (select name from org), 'status', 'active',
        'directory_managed', false, 'custom_attributes', '{}'::jsonb,
        'role', jsonb_build_object('slug', (select slug from dr)),
        'roles', jsonb_build_array(jsonb_build_object('slug', (select slug from dr))),
        'created_at', ${v.now}::text, 'updated_at', ${v.now}::text),
      ${v.now}::timestamptz, true
    from m
    union all
    select ${v.event3}, ${v.env}, 'authentication.sso_succeeded', ${v.org},
      jsonb_build_object('type', 'sso', 'status', 'succeeded', 'ip_address', null, 'user_agent', null,
        'user_id', (select id from u), 'email', ${v.email}::text,
        'sso', jsonb_build_object('organization_id', ${v.org}::text, 'connection_id', ${v.connection}::text,
          'session_id', null)),
      ${v.now}::timestamptz, true
    from code
  )
  select (select count(*)::int from code) as issued, (select app_state from auth) as app_state,
    (select redirect_uri from auth) as redirect_uri`;

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Content-Length': 0 });
  res.end();
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function acs(req: IncomingMessage, res: ServerResponse, connectionId: string): Promise<void> {
  const form = await readForm(req);
  const response = form.get('SAMLResponse') ?? '';
  const relay = form.get('RelayState') ?? '';
  const [found] = await find(connectionId, relay);
  if (!found?.authorization_id || !found.saml_request_id) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return void res.end('unknown authorization');
  }
  const nowDate = new Date();
  if (found.authorization_state !== 'started' || (found.expires_at?.getTime() ?? 0) <= nowDate.getTime()) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return void res.end('authorization used or expired');
  }
  if (/<!DOCTYPE/i.test(Buffer.from(response, 'base64').toString('utf8'))) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return void res.end('DOCTYPE');
  }
  const expected = found.saml_request_id;
  const issuedAt = nowDate.toISOString();
  // The one request this response may answer (Atrium's `expectedRequest`).
  const cacheProvider: CacheProvider = {
    getAsync: async (key) => (key === expected ? issuedAt : null),
    saveAsync: async () => null,
    removeAsync: async () => null,
  };
  const saml = new SAML({
    issuer: `${atriumUrl}/sso/saml/${connectionId}`,
    callbackUrl: `${atriumUrl}/sso/saml/acs/${connectionId}`,
    audience: `${atriumUrl}/sso/saml/${connectionId}`,
    idpCert: found.certificates.map((c) => c.pem),
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider,
    requestIdExpirationPeriodMs: Number.MAX_SAFE_INTEGER,
  });
  const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: response });
  if (!profile) throw new Error('node-saml verified no profile');
  const assertion = (profile.getAssertion?.() ?? {}) as {
    Assertion?: { $?: { ID?: string }; Conditions?: { $?: { NotOnOrAfter?: string } }[] };
  };
  const assertionId = assertion.Assertion?.$?.ID;
  if (!assertionId) throw new Error('the assertion has no ID');
  const notOnOrAfter = Date.parse(assertion.Assertion?.Conditions?.[0]?.$?.NotOnOrAfter ?? '');
  const until = (Number.isFinite(notOnOrAfter) ? notOnOrAfter : nowDate.getTime() + 86_400_000) + SKEW_MS;
  const remembered = await sql`
    insert into saml_assertion_ids (environment_id, connection_id, assertion_id, expires_at)
    values (${found.environment_id}, ${connectionId}, ${assertionId}, ${new Date(until).toISOString()}::timestamptz)
    on conflict (connection_id, assertion_id) do update set environment_id = excluded.environment_id,
      expires_at = excluded.expires_at where saml_assertion_ids.expires_at < ${issuedAt}::timestamptz
    returning 1`;
  if (remembered.length === 0) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return void res.end('replayed assertion');
  }
  const attributes = profile as unknown as Record<string, unknown>;
  const nameId = profile.nameID?.trim();
  const email = (first(attributes, EMAIL_NAMES) ?? nameId ?? '').toLowerCase();
  if (!nameId || !email.includes('@')) throw new Error('no subject or e-mail');
  const firstName = first(attributes, FIRST_NAMES) ?? null;
  const lastName = first(attributes, LAST_NAMES) ?? null;
  const name =
    firstName !== null || lastName !== null ? [firstName, lastName].filter((p) => p !== null).join(' ') : null;
  const code = [...randomBytes(43)].map((b) => BASE62[b % 62]).join('');
  const [row] = await signIn({
    now: issuedAt,
    env: found.environment_id,
    org: found.organization_id,
    connection: connectionId,
    authorization: found.authorization_id,
    domain: email.slice(email.lastIndexOf('@') + 1),
    idp: nameId,
    email,
    firstName,
    lastName,
    name,
    raw: JSON.stringify(profile.attributes ?? {}),
    userId: newId('user'),
    membershipId: newId('organizationMembership'),
    profileId: newId('ssoProfile'),
    codeHash: createHash('sha256').update(code).digest('hex'),
    expires: new Date(nowDate.getTime() + CODE_TTL_MS).toISOString(),
    event1: newId('event'),
    event2: newId('event'),
    event3: newId('event'),
  });
  if (row?.issued !== 1) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return void res.end('sign-in refused');
  }
  const location = new URL(row.redirect_uri as string);
  location.searchParams.set('code', code);
  if (row.app_state !== null) location.searchParams.set('state', row.app_state);
  redirect(res, location.toString());
}

const ACS = /^\/sso\/saml\/acs\/([^/?]+)$/;

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const route = req.method === 'POST' ? ACS.exec(req.url ?? '') : null;
  if (!route) {
    res.writeHead(404);
    return void res.end();
  }
  acs(req, res, route[1] as string).catch((error: unknown) => {
    // The load generator closes its connections at the end of a run, some mid-request.
    if (req.destroyed) return;
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    if (!res.headersSent) {
      res.writeHead(500);
      res.end();
    }
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => void sql.end({ timeout: 1 }).then(() => process.exit(0))));
}
