/**
 * PostgreSQL's own work per call of the organization statements, without HTTP or a load
 * generator: each statement the procedures send (captured from the driver) is prepared once,
 * planned generic as the server plans it, and run `--runs` times under
 * `EXPLAIN (ANALYZE, TIMING OFF)`; the median "Execution Time" is printed. Writes run in a
 * transaction that is rolled back. Run it on two checkouts to compare them (bench/README.md,
 * "Issue #20's leftovers"):
 *
 *   npx tsx bench/statement-cost.ts [--pg-url url] [--size 1000] [--runs 400]
 */
import { parseArgs } from 'node:util';
import { openDb, schema } from '@atrium/db';
import { createCaller, createEnvironment, createInnerContext } from '@atrium/routers';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { benchDeps, scratchDatabase } from './in-process.ts';
import { type Exec, installSeedHelpers, seededDomain, seededOrganizationId, seedOrganizations } from './seed.ts';

const { values: args } = parseArgs({
  options: {
    'pg-url': { type: 'string' },
    size: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '400' },
  },
});
const serverUrl = args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const size = Number(args.size);
const runs = Number(args.runs);

/** The same literal encoding the plan tests use, for `EXECUTE name(…)`. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return literal(`{${value.map((v) => `"${String(v).replaceAll('"', '\\"')}"`).join(',')}}`);
  if (value instanceof Date) return literal(value.toISOString());
  return `'${String(value).replaceAll("'", "''")}'`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const scratch = await scratchDatabase(serverUrl, 'atrium_stmt');
const handle = await openDb({ databaseUrl: scratch.url, poolSize: 2 });
const sent: { sql: string; params: unknown[] }[] = [];
const recording = postgres(scratch.url, {
  max: 1,
  prepare: true,
  onnotice: () => {},
  connection: { plan_cache_mode: 'force_generic_plan' },
  debug: (_c, query, params) => sent.push({ sql: query, params: params as unknown[] }),
});
try {
  await handle.migrate();
  const deps = benchDeps(handle, { apiKeyCacheTtlMs: 60_000, webhooksAllowPrivate: false }, 'silent');
  const env = await createEnvironment(deps, { name: 'statement-cost' });
  const exec: Exec = (text, params = []) => recording.unsafe(text, params as never[]) as never;
  await installSeedHelpers(exec);
  await seedOrganizations(exec, env.environment_id, 0, size);
  await recording.unsafe('vacuum analyze organizations, organization_domains');
  const db = drizzle(recording, { schema });
  const caller = createCaller(createInnerContext({ ...deps, db: db as never }, `Bearer ${env.api_key}`));
  const n = Math.ceil(size / 2);

  const cases: [string, () => Promise<unknown>, (sql: string) => boolean][] = [
    [
      'get by id',
      () => caller.organizations.get({ id: seededOrganizationId(n) }),
      (s) => s.includes('"organizations"."id" = $'),
    ],
    ['list first page (limit 10)', () => caller.organizations.list({ limit: 10 }), (s) => s.includes('limit $')],
    ['domains filter', () => caller.organizations.list({ domains: [seededDomain(n)] }), (s) => s.includes('any($')],
    [
      'by external id',
      () => caller.organizations.getByExternalId({ external_id: `bench-ext-${n}` }),
      (s) => s.includes('"external_id" = $'),
    ],
    [
      'create without domain_data',
      () => caller.organizations.create({ name: 'Statement cost', metadata: { tier: 'team' } }),
      (s) => s.includes('insert into "organizations"'),
    ],
  ];
  console.log(`PostgreSQL execution time per call, median of ${runs} runs, ${size} organizations (ms):`);
  for (const [name, run, pick] of cases) {
    sent.length = 0;
    await run();
    const statement = sent.find((s) => pick(s.sql));
    if (!statement) throw new Error(`no statement captured for ${name}`);
    if (name.startsWith('create')) {
      // Undo the captured call's write, so each run writes the same new rows (and rolls back).
      const id = statement.params.find((p) => typeof p === 'string' && p.startsWith('org_')) as string;
      await recording.unsafe('delete from events where organization_id = $1', [id]);
      await recording.unsafe('delete from organizations where id = $1', [id]);
    }
    const args = statement.params.map(literal).join(', ');
    const times: number[] = [];
    await recording.reserve().then(async (conn) => {
      try {
        await conn.unsafe(`prepare probe as ${statement.sql}`);
        for (let i = 0; i < runs; i++) {
          await conn.unsafe('begin');
          const rows = await conn.unsafe(`explain (analyze, timing off, format json) execute probe(${args})`);
          await conn.unsafe('rollback');
          const plan = (rows[0] as unknown as { 'QUERY PLAN': { 'Execution Time': number }[] })['QUERY PLAN'];
          times.push(plan[0]!['Execution Time']);
        }
        await conn.unsafe('deallocate probe');
      } finally {
        conn.release();
      }
    });
    console.log(`  ${name.padEnd(28)} ${median(times).toFixed(4)}`);
  }
} finally {
  await recording.end({ timeout: 5 });
  await handle.close();
  await scratch.drop();
}
