/** Runs one SQL statement with `$n` parameters (postgres.js `sql.unsafe`, or a Drizzle adapter in tests). */
export type Exec = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Set-based seeding for the benchmark: every batch is one `insert … select … from
 * generate_series`, never one API call per row. Seeded ids are real `<prefix><ULID>` values
 * (Crockford base32, time part in the past), so they sort before anything the API creates
 * during the run and keyset pagination sees the same id shapes as in production.
 */

/** Seeded rows get creation times starting here (ms), one millisecond apart. */
const BASE_MS = Date.UTC(2026, 0, 1);

/** Ten Crockford base32 characters of `v` (its low 50 bits) as one SQL expression. */
function b32Expression(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const chars: string[] = [];
  for (let i = 9; i >= 0; i -= 1) chars.push(`substr('${alphabet}', ((v >> ${5 * i}) & 31)::int + 1, 1)`);
  return chars.join(' || ');
}

/** Installs the helpers the seeding SQL uses (the bench database is dropped afterwards). */
export async function installSeedHelpers(exec: Exec): Promise<void> {
  await exec(`
    create or replace function bench_b32(v bigint) returns text
    language sql immutable parallel safe as $$
      select ${b32Expression()}
    $$`);
  await exec(`
    create or replace function bench_id(prefix text, n bigint) returns text
    language sql immutable parallel safe as $$
      select prefix || bench_b32(${BASE_MS}::bigint + n) || '000000' || bench_b32(n)
    $$`);
  await exec(`
    create or replace function bench_ts(n bigint) returns timestamptz
    language sql immutable parallel safe as $$
      select to_timestamp((${BASE_MS}::bigint + n) / 1000.0)
    $$`);
}

/** The seeded domain of organization number `n` (1-based). */
export function seededDomain(n: number): string {
  return `o${n}.bench-atrium.com`;
}

/** Organizations per domain when seeding shared domains (`seedOrganizations`' `shared`). */
export const SHARED_BY = 5;

/** The shared domain of organization number `n`: organizations 1–5 hold s1, 6–10 s2, and so on. */
export function sharedDomain(n: number): string {
  return `s${Math.floor((n - 1) / SHARED_BY) + 1}.bench-atrium.com`;
}

/** The id of seeded organization number `n`, computed the way the SQL does it. */
export function seededOrganizationId(n: number): string {
  return seededId('org_', n);
}

/** The user of seeded membership `n` (seedGroup's members; user 1 is the widget scenarios' caller). */
export function seededUserId(n: number): string {
  return seededId('user_', n);
}

/** `<prefix><ULID>` of seeded row `n`: time part BASE_MS + n, random part n (bigint shifts stop at 63 bits in SQL, hence 6 zeros then 10 chars). */
export function seededId(prefix: string, n: number): string {
  return `${prefix}${b32(BigInt(BASE_MS + n), 10)}000000${b32(BigInt(n), 10)}`;
}

function b32(value: bigint, length: number): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let out = '';
  for (let i = length - 1; i >= 0; i -= 1) out += alphabet[Number((value >> BigInt(5 * i)) & 31n)];
  return out;
}

/**
 * Grows the environment's seeded organizations from `from` (exclusive) to `to` (inclusive),
 * each with one domain, in batches so one statement never holds a million rows in memory.
 * Each has its own domain (`seededDomain`, every other one verified), or with `shared` one of
 * `SHARED_BY` organizations' domain (`sharedDomain`, the first of each five verified).
 */
export async function seedOrganizations(
  exec: Exec,
  environmentId: string,
  from: number,
  to: number,
  shared = false,
): Promise<void> {
  const domain = shared
    ? `'s' || ((n - 1) / ${SHARED_BY} + 1) || '.bench-atrium.com'`
    : `'o' || n || '.bench-atrium.com'`;
  const verified = shared ? `(n - 1) % ${SHARED_BY} = 0` : 'n % 2 = 0';
  const batch = 100_000;
  for (let start = from + 1; start <= to; start += batch) {
    const end = Math.min(to, start + batch - 1);
    const params = [environmentId, start, end];
    await exec(
      `insert into organizations (id, environment_id, name, external_id, metadata, domain_count, created_at, updated_at)
       select bench_id('org_', n), $1, 'Bench organization ' || n, 'bench-ext-' || n,
              jsonb_build_object('tier', case when n % 3 = 0 then 'enterprise' else 'team' end),
              1, bench_ts(n), bench_ts(n)
       from generate_series($2::bigint, $3::bigint) as n`,
      params,
    );
    await exec(
      `insert into organization_domains (id, environment_id, organization_id, domain, state,
              verification_strategy, verification_prefix, verification_token, created_at, updated_at)
       select bench_id('org_domain_', n), $1, bench_id('org_', n), ${domain},
              case when ${verified} then 'verified' else 'pending' end,
              case when ${verified} then 'manual' else 'dns' end,
              'workos-domain-verification', 'benchtoken' || md5(n::text), bench_ts(n), bench_ts(n)
       from generate_series($2::bigint, $3::bigint) as n`,
      params,
    );
  }
}

export async function tableExists(exec: Exec, table: string): Promise<boolean> {
  const [row] = await exec('select to_regclass($1) is not null as ok', [`public.${table}`]);
  return row?.ok === true;
}

interface ColumnInfo {
  column_name: string;
  is_nullable: 'YES' | 'NO';
  column_default: string | null;
}

/**
 * Builds `insert into <table> (<columns>) select <expressions> from <source>` from the table's
 * actual columns: `values` maps the column names we know how to fill to SQL expressions;
 * a required column (not null, no default) that we cannot fill makes the seeding refuse,
 * so a scenario whose table does not look as expected is reported instead of guessed.
 */
async function adaptiveInsert(
  exec: Exec,
  table: string,
  values: Record<string, string>,
  source: string,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const columns = (await exec(
    `select column_name, is_nullable, column_default from information_schema.columns
     where table_schema = 'public' and table_name = $1 order by ordinal_position`,
    [table],
  )) as unknown as ColumnInfo[];
  const names: string[] = [];
  const expressions: string[] = [];
  for (const column of columns) {
    const expression = values[column.column_name];
    if (expression !== undefined) {
      names.push(`"${column.column_name}"`);
      expressions.push(expression);
    } else if (column.is_nullable === 'NO' && column.column_default === null) {
      return { ok: false, reason: `${table}.${column.column_name} is required and the bench does not know it` };
    }
  }
  await exec(`insert into "${table}" (${names.join(', ')}) select ${expressions.join(', ')} from ${source}`);
  return { ok: true };
}

export interface GroupSeed {
  organizationId: string;
  groupId: string;
  members: number;
}

/**
 * One group of `members` organization memberships in the first seeded organization, when the
 * `groups` and `group_memberships` tables exist (they come from the groups branch).
 */
export async function seedGroup(
  exec: Exec,
  environmentId: string,
  members: number,
): Promise<{ ok: true; seed: GroupSeed } | { ok: false; reason: string }> {
  for (const table of ['groups', 'group_memberships']) {
    if (!(await tableExists(exec, table))) return { ok: false, reason: `table ${table} does not exist on this branch` };
  }
  const organizationId = seededOrganizationId(1);
  const groupId = seededId('group_', 1);
  const env = `'${environmentId}'`;
  const org = `'${organizationId}'`;
  const range = `generate_series(1, ${members}) as n`;
  try {
    await exec(`
      insert into users (id, environment_id, email, created_at, updated_at)
      select bench_id('user_', n), ${env}, 'member' || n || '@o1.bench-atrium.com', bench_ts(n), bench_ts(n)
      from ${range}`);
    await exec(`
      insert into organization_memberships (id, environment_id, user_id, organization_id, created_at, updated_at)
      select bench_id('om_', n), ${env}, bench_id('user_', n), ${org}, bench_ts(n), bench_ts(n)
      from ${range}`);
    // Member 1 is an admin: the widget scenarios' token carries only the scopes its roles grant.
    await exec(`
      insert into organization_membership_roles (environment_id, organization_membership_id, role_id, position)
      select ${env}, bench_id('om_', 1), id, 0 from roles
      where environment_id = ${env} and organization_id is null and slug = 'admin'`);
    const group = await adaptiveInsert(
      exec,
      'groups',
      {
        id: `'${groupId}'`,
        environment_id: env,
        organization_id: org,
        name: `'Bench group'`,
        description: `'Seeded by npm run bench'`,
        created_at: 'now()',
        updated_at: 'now()',
      },
      'generate_series(1, 1)',
    );
    if (!group.ok) return group;
    const memberships = await adaptiveInsert(
      exec,
      'group_memberships',
      {
        id: `bench_id('group_membership_', n)`,
        environment_id: env,
        organization_id: org,
        group_id: `'${groupId}'`,
        organization_membership_id: `bench_id('om_', n)`,
        user_id: `bench_id('user_', n)`,
        created_at: 'bench_ts(n)',
        updated_at: 'bench_ts(n)',
      },
      range,
    );
    if (!memberships.ok) return memberships;
  } catch (error) {
    return { ok: false, reason: `seeding groups failed: ${(error as Error).message}` };
  }
  return { ok: true, seed: { organizationId, groupId, members } };
}
