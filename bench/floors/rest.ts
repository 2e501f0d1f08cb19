/**
 * The REST floor (bench/README.md, "Floors (issue #35)"): three routes of the API-key surface with
 * the least work each must do on Atrium's stack, and the same JSON Atrium answers. node:http; the
 * `Authorization: Bearer sk_…` key hashed (SHA-256) on every request, its environment looked up by
 * that hash once and then cached (Atrium's apiKeyCache); postgres.js with prepared statements
 * (floors/common.ts); then ONE statement per request:
 * - `GET /organizations/:id`: the organization with its domains, rendered by PostgreSQL;
 * - `GET /user_management/organization_memberships?organization_id=…&limit=…`: the first page,
 *   newest first, each membership with its organization's name, role slugs and user (mapped here:
 *   rendering it in PostgreSQL cost more CPU in all);
 * - `POST /organizations` (durable): the row and its `organization.created` event committed by
 *   one autocommit statement before the 201, concurrent creates together (ids and times differ).
 * Left out, as in the other floors: the rate limit, idempotency keys, `domain_data`, cursors and
 * the other list filters (answered 404 here, never measured).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { newId } from '@atrium/db';
import { listen, send, sql } from './common.ts';

const API_KEY = /^sk_(test|live)_[0-9A-Za-z]{40}$/;

/** Environments of live keys by the key's SHA-256 (Atrium caches the same; failures are not cached). */
const environmentByHash = new Map<string, string>();

async function environmentOf(req: IncomingMessage): Promise<string | undefined> {
  const header = req.headers.authorization;
  if (!header?.startsWith('Bearer ')) return undefined;
  const secret = header.slice(7);
  if (!API_KEY.test(secret)) return undefined;
  const hash = createHash('sha256').update(secret).digest('hex');
  const cached = environmentByHash.get(hash);
  if (cached) return cached;
  const [row] = await sql<{ environment_id: string }[]>`
    select k.environment_id from api_keys k join environments e on e.id = k.environment_id
    where k.key_hash = ${hash} and k.revoked_at is null`;
  if (row) environmentByHash.set(hash, row.environment_id);
  return row?.environment_id;
}

const sendText = (res: Parameters<typeof send>[0], status: number, text: string): void => {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
};

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Atrium's create body as the floor accepts it: a name (trimmed, 1-256) and string metadata (≤ 50 keys). */
function createInput(body: unknown): { name: string; metadata: Record<string, string> } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { name, metadata = {} } = body as { name?: unknown; metadata?: unknown };
  if (typeof name !== 'string' || name.trim().length === 0 || name.trim().length > 256) return undefined;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const entries = Object.entries(metadata);
  if (entries.length > 50 || entries.some(([k, v]) => k.length > 40 || typeof v !== 'string' || v.length > 600))
    return undefined;
  return { name: name.trim(), metadata: metadata as Record<string, string> };
}

/** A membership page's row: timestamps as PostgreSQL's text (`2026-11-29 20:57:06.123456+00`). */
interface MembershipRow {
  id: string;
  user_id: string;
  organization_id: string;
  organization_name: string;
  status: string;
  directory_managed: boolean;
  custom_attributes: unknown;
  created_at: string;
  updated_at: string;
  slugs: string[];
  email: string;
  email_verified: boolean;
  first_name: string | null;
  last_name: string | null;
  profile_picture_url: string | null;
  last_sign_in_at: string | null;
  locale: string | null;
  external_id: string | null;
  metadata: unknown;
  user_created_at: string;
  user_updated_at: string;
}

/** A UTC timestamp's text as Atrium's wire time: milliseconds (truncated), `Z`. */
function wire(text: string): string {
  const fraction = text.charCodeAt(19) === 0x2e ? text.slice(20, text.length - 3) : '';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.slice(0, 3).padEnd(3, '0')}Z`;
}

const toMembership = (r: MembershipRow) => ({
  object: 'organization_membership',
  id: r.id,
  user_id: r.user_id,
  organization_id: r.organization_id,
  organization_name: r.organization_name,
  status: r.status,
  directory_managed: r.directory_managed,
  custom_attributes: r.custom_attributes,
  role: { slug: r.slugs[0] },
  roles: r.slugs.map((slug) => ({ slug })),
  created_at: wire(r.created_at),
  updated_at: wire(r.updated_at),
  user: {
    object: 'user',
    id: r.user_id,
    email: r.email,
    email_verified: r.email_verified,
    name: [r.first_name, r.last_name].filter((part) => part).join(' ') || null,
    first_name: r.first_name,
    last_name: r.last_name,
    profile_picture_url: r.profile_picture_url,
    last_sign_in_at: r.last_sign_in_at === null ? null : wire(r.last_sign_in_at),
    locale: r.locale,
    external_id: r.external_id,
    metadata: r.metadata,
    created_at: wire(r.user_created_at),
    updated_at: wire(r.user_updated_at),
  },
});

interface NewOrganization {
  id: string;
  env: string;
  name: string;
  metadata: string;
  at: string;
  data: string;
}

/**
 * The durable create: each organization and its `organization.created` event written by one
 * autocommit statement before its 201. Creates that arrive while one is in flight wait for it and
 * then go together as the next statement (group commit, as Atrium's `coalesced` does): one
 * commit's flush for many, the least a durable write can cost per request.
 */
const writeBatch = (batch: NewOrganization[]) => sql`
  with input as (
    select * from unnest(${batch.map((o) => o.id)}::text[], ${batch.map((o) => o.env)}::text[],
      ${batch.map((o) => o.name)}::text[], ${batch.map((o) => o.metadata)}::text[], ${batch.map((o) => o.at)}::text[],
      ${batch.map(() => newId('event'))}::text[], ${batch.map((o) => o.data)}::text[]) as i(id, env, name, metadata, at, event_id, data)
  ), changed as (
    insert into organizations (id, environment_id, name, external_id, metadata, billing_customer_id,
      allow_profiles_outside_organization, domain_count, created_at, updated_at)
    select id, env, name, null, metadata::jsonb, null, false, 0, at::timestamptz, at::timestamptz from input
    returning id
  )
  insert into events (id, environment_id, event, organization_id, data, created_at, fanout_pending, actor)
  select i.event_id, i.env, 'organization.created', i.id, i.data::jsonb, i.at::timestamptz, true, null
  from input i join changed c on c.id = i.id`;

let waiting: { item: NewOrganization; done: (error?: unknown) => void }[] = [];
let inFlight = false;

async function flush(): Promise<void> {
  while (waiting.length > 0) {
    const batch = waiting.slice(0, 100);
    waiting = waiting.slice(batch.length);
    inFlight = true;
    try {
      await writeBatch(batch.map((w) => w.item));
      for (const w of batch) w.done();
    } catch (error) {
      for (const w of batch) w.done(error);
    } finally {
      inFlight = false;
    }
  }
}

function create(item: NewOrganization): Promise<void> {
  return new Promise((resolve, reject) => {
    waiting.push({ item, done: (error) => (error === undefined ? resolve() : reject(error)) });
    if (!inFlight) void flush();
  });
}

const ORGANIZATION = /^\/organizations\/([0-9A-Za-z_]+)$/;
const MEMBERSHIPS = '/user_management/organization_memberships';

listen(async (req, res) => {
  const env = await environmentOf(req);
  if (!env) return send(res, 401, { message: 'Unauthorized' });
  const url = new URL(req.url ?? '/', 'http://floor');
  const byId = req.method === 'GET' ? ORGANIZATION.exec(url.pathname) : null;
  if (byId) {
    // The organization and its domains, as toOrganization renders them (timestamps in milliseconds, `Z`).
    const [row] = await sql<{ j: string }[]>`
      select json_build_object('object', 'organization', 'id', o.id, 'name', o.name,
        'domains', (select coalesce(json_agg(json_build_object('object', 'organization_domain', 'id', d.id,
            'organization_id', d.organization_id, 'domain', d.domain, 'state', d.state,
            'verification_strategy', d.verification_strategy, 'verification_prefix', d.verification_prefix,
            'verification_token', d.verification_token, 'verification_failed_reason', d.verification_failed_reason,
            'created_at', to_char(d.created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'updated_at', to_char(d.updated_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) order by d.id), '[]'::json)
          from organization_domains d where d.organization_id = o.id),
        'metadata', o.metadata, 'external_id', o.external_id, 'billing_customer_id', o.billing_customer_id,
        'allow_profiles_outside_organization', o.allow_profiles_outside_organization,
        'created_at', to_char(o.created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updated_at', to_char(o.updated_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text as j
      from organizations o where o.environment_id = ${env} and o.id = ${byId[1] as string}`;
    if (!row) return send(res, 404, { message: 'not found' });
    // Upstream's `stripe_customer_id` is absent while unset, as Atrium answers (none is set here).
    return sendText(res, 200, row.j);
  }
  const org = url.searchParams.get('organization_id');
  if (req.method === 'GET' && url.pathname === MEMBERSHIPS && org && url.searchParams.size <= 2) {
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 10) || 10));
    // The page and one more row (is there a next page?), newest first; a membership without roles
    // shows the environment's default role. Timestamps as text (no Date per value).
    const rows = await sql<MembershipRow[]>`
      select m.id, m.user_id, m.organization_id, o.name as organization_name, m.status, m.directory_managed,
        m.custom_attributes, m.created_at::text, m.updated_at::text, coalesce(
          (select array_agg(r.slug order by mr.position) from organization_membership_roles mr join roles r on r.id = mr.role_id
            where mr.organization_membership_id = m.id),
          (select array[r.slug] from roles r where r.environment_id = ${env} and r.organization_id is null and r.is_default),
          '{}') as slugs,
        u.email, u.email_verified, u.first_name, u.last_name, u.profile_picture_url, u.last_sign_in_at::text,
        u.locale, u.external_id, u.metadata, u.created_at::text as user_created_at, u.updated_at::text as user_updated_at
      from organization_memberships m join organizations o on o.id = m.organization_id join users u on u.id = m.user_id
      where m.environment_id = ${env} and m.organization_id = ${org}
      order by m.id desc limit ${limit + 1}`;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return send(res, 200, {
      object: 'list',
      data: page.map(toMembership),
      list_metadata: { before: null, after: rows.length > limit && last ? last.id : null },
    });
  }
  if (req.method === 'POST' && url.pathname === '/organizations') {
    const input = createInput(await bodyOf(req));
    if (!input) return send(res, 422, { message: 'invalid' });
    const at = new Date().toISOString();
    const organization = {
      object: 'organization',
      id: newId('organization'),
      name: input.name,
      domains: [],
      metadata: input.metadata,
      external_id: null,
      billing_customer_id: null,
      allow_profiles_outside_organization: false,
      created_at: at,
      updated_at: at,
    };
    const text = JSON.stringify(organization);
    await create({
      id: organization.id,
      env,
      name: input.name,
      metadata: JSON.stringify(input.metadata),
      at,
      data: text,
    });
    return sendText(res, 201, text);
  }
  send(res, 404, { message: 'not found' });
});
