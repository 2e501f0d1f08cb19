import {
  events,
  idempotencyKeys,
  organizationDomains,
  organizationMemberships,
  organizations,
  users,
} from '@atrium/db';
import { count, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import fc from 'fast-check';
import { type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * The catalogue the reliability suites run over: every REST operation, every table an
 * environment writes to, every POST that creates. Other branches add their endpoints as rows
 * here (groups, users, memberships, tokens, agents, connections, events, webhooks) and the
 * fuzz, idempotency and race suites cover them without further code.
 */

/** Every environment-scoped table (what "nothing stored" is checked against). */
export const SCOPED_TABLES: Array<{ name: string; table: PgTable; environmentId: PgColumn }> = [
  { name: 'organizations', table: organizations, environmentId: organizations.environmentId },
  { name: 'organization_domains', table: organizationDomains, environmentId: organizationDomains.environmentId },
  { name: 'users', table: users, environmentId: users.environmentId },
  {
    name: 'organization_memberships',
    table: organizationMemberships,
    environmentId: organizationMemberships.environmentId,
  },
  { name: 'events', table: events, environmentId: events.environmentId },
  { name: 'idempotency_keys', table: idempotencyKeys, environmentId: idempotencyKeys.environmentId },
];

/** Row counts of every scoped table for one environment, e.g. `{organizations: 2, …}`. */
export async function snapshot(env: TestEnvironment): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const { name, table, environmentId } of SCOPED_TABLES) {
    const [row] = await env.deps.db.select({ n: count() }).from(table).where(eq(environmentId, env.environmentId));
    out[name] = Number(row?.n ?? 0);
  }
  return out;
}

/** What an operation's fixtures provide: existing ids to aim valid requests at. */
export interface Fixture {
  env: TestEnvironment;
  organizationId: string;
  domainId: string;
}

export async function makeFixture(env: TestEnvironment): Promise<Fixture> {
  const org = await env.http.post('/organizations', {
    name: 'Fixture',
    domain_data: [{ domain: uniqueDomain('fx'), state: 'pending' }],
  });
  if (org.status !== 201) throw new Error(`fixture: ${org.status} ${org.text}`);
  return { env, organizationId: org.body.id, domainId: org.body.domains[0].id };
}

/** Strings that have broken services before: SQL, unicode edge cases, prototype keys, paths. */
export const HOSTILE_STRINGS = [
  "'; drop table organizations; --",
  "' or '1'='1",
  '"); select pg_sleep(10); --',
  '%',
  '_',
  '\\',
  '$1',
  '__proto__',
  'constructor',
  'prototype',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\u202eevil',
  'Z\u0351\u0336\u0489a\u0336l\u0336g\u0336o',
  '𝕒𝕔𝕞𝕖',
  '🏳️‍🌈',
  'аpple.com',
  'xn--pple-43d.com',
  'ACME.COM.',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '<script>alert(1)</script>',
  '{"$gt":""}',
  ' ',
  '',
  'a'.repeat(300),
  '1e309',
  'NaN',
  'null',
  'raw:%',
  'raw:%zz',
  'raw:%E0%A4%A',
  'raw:%00',
  'raw:%C0%AF',
  'raw:%FF%FE',
];

export const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
  { weight: 1, arbitrary: fc.domain() },
);

/** Any JSON value, including the wrong types for every field. */
export const anyJson = fc.oneof(
  hostileString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
);

const metadataArb = fc.oneof(
  fc.dictionary(hostileString, hostileString, { maxKeys: 6 }),
  fc.constant(JSON.parse('{"__proto__":"x","constructor":"y","prototype":"z"}')),
  fc.constant(JSON.parse('{"__proto__":{"polluted":"yes"}}')),
  anyJson,
);

const domainDataArb = fc.oneof(
  fc.array(
    fc.record(
      {
        domain: fc.oneof(hostileString, fc.domain()),
        state: fc.oneof(fc.constantFrom('pending', 'verified'), hostileString),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  ),
  anyJson,
);

/** A REST operation of the catalogue. */
export interface Operation {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path, aimed at the fixture's ids, or at `param` when given (path fuzzing). */
  path: (f: Fixture, param?: string) => string;
  /** Whether the path carries a parameter worth fuzzing. */
  hasParam: boolean;
  /** Body fields and their hostile arbitraries (mixed with valid values). */
  body?: (f: Fixture) => Record<string, fc.Arbitrary<unknown>>;
  /** Query parameters and their hostile arbitraries. */
  query?: Record<string, fc.Arbitrary<string>>;
  /** A POST that creates a record: counted in this table, used by idempotency and race suites. */
  creates?: { table: string; validBody: (f: Fixture) => Record<string, unknown> };
}

/**
 * A path segment: percent-encoded (a lone surrogate as the UTF-8 bytes of U+FFFD, as a client
 * would send it), or sent as it is when it starts with `raw:` (malformed escapes).
 */
export function segment(value: string): string {
  if (value.startsWith('raw:')) return value.slice(4);
  return [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}
const p = (param: string | undefined, fallback: string) => segment(param ?? fallback);
const listQuery = {
  limit: fc.oneof(fc.constantFrom('0', '1', '100', '101', '-1', '1.5', 'abc', ''), hostileString),
  order: fc.oneof(fc.constantFrom('asc', 'desc', 'normal', 'ASC'), hostileString),
  after: hostileString,
  before: hostileString,
};

export const OPERATIONS: Operation[] = [
  {
    name: 'list organizations',
    method: 'GET',
    path: () => '/organizations',
    hasParam: false,
    query: { ...listQuery, domains: fc.oneof(hostileString, fc.domain()), 'domains[]': hostileString },
  },
  {
    name: 'get organization',
    method: 'GET',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}`,
    hasParam: true,
  },
  {
    name: 'get organization by external id',
    method: 'GET',
    path: (_f, param) => `/organizations/external_id/${p(param, 'ext-1')}`,
    hasParam: true,
  },
  {
    name: 'create organization',
    method: 'POST',
    path: () => '/organizations',
    hasParam: false,
    body: () => ({
      name: fc.oneof(fc.constant('Acme'), hostileString, anyJson),
      domain_data: domainDataArb,
      external_id: fc.oneof(hostileString, anyJson),
      metadata: metadataArb,
      allow_profiles_outside_organization: anyJson,
    }),
    creates: { table: 'organizations', validBody: () => ({ name: 'Idempotent Inc' }) },
  },
  {
    name: 'update organization',
    method: 'PUT',
    path: (f, param) => `/organizations/${p(param, f.organizationId)}`,
    hasParam: true,
    body: () => ({
      name: fc.oneof(hostileString, anyJson),
      domain_data: domainDataArb,
      external_id: fc.oneof(hostileString, anyJson),
      metadata: metadataArb,
      billing_customer_id: fc.oneof(hostileString, anyJson),
      allow_profiles_outside_organization: anyJson,
    }),
  },
  {
    name: 'delete organization',
    method: 'DELETE',
    path: (f, param) => `/organizations/${p(param, `${f.organizationId}x`)}`,
    hasParam: true,
  },
  {
    name: 'get organization domain',
    method: 'GET',
    path: (f, param) => `/organization_domains/${p(param, f.domainId)}`,
    hasParam: true,
  },
  {
    name: 'create organization domain',
    method: 'POST',
    path: () => '/organization_domains',
    hasParam: false,
    body: (f) => ({
      domain: fc.oneof(hostileString, fc.domain(), anyJson),
      organization_id: fc.oneof(fc.constant(f.organizationId), hostileString, anyJson),
    }),
    creates: {
      table: 'organization_domains',
      validBody: (f) => ({ organization_id: f.organizationId, domain: uniqueDomain('idem') }),
    },
  },
  {
    name: 'verify organization domain',
    method: 'POST',
    path: (f, param) => `/organization_domains/${p(param, f.domainId)}/verify`,
    hasParam: true,
    body: () => ({ anything: anyJson }),
  },
  {
    name: 'delete organization domain',
    method: 'DELETE',
    path: (f, param) => `/organization_domains/${p(param, `${f.domainId}x`)}`,
    hasParam: true,
  },
];
