/**
 * `npx tsx bench/layers.ts [--pg-url url] [--rounds 7] [--ops 20000] [--concurrency 32]`: this
 * process's CPU per call of `GET /organizations/:id` at each layer below HTTP, so the procedure
 * layer's part of the gap to the REST floor can be read one layer at a time (bench/README.md,
 * "The sixteenth session"). One scratch database, one organization with a domain; then, round
 * after round, per layer in turn: `--ops` calls, `--concurrency` in flight, and
 * `process.cpuUsage()` before and after (every thread of this process; PostgreSQL's own work is
 * not counted). Layers:
 * - `sql`: the REST floor's one statement over a postgres.js pool of two (floors/rest.ts);
 * - `procedure`: the tRPC procedure as the REST dispatcher calls it (`callProcedure`: the API
 *   guard, zod input, the service and its store's prepared read, zod output), with the
 *   environment resolved as the pipeline resolves it;
 * - `answer`: the procedure and `JSON.stringify`, as `successOutcome` renders it.
 * `--polymorphic` first calls every API query procedure, as a server's shared code meets many.
 */
import { parseArgs } from 'node:util';
import { openDb } from '@atrium/db';
import {
  appRouter,
  authenticateApiKey,
  callProcedure,
  createCaller,
  createEnvironment,
  createInnerContext,
  procedureEntries,
} from '@atrium/routers';
import postgres from 'postgres';
import { median } from './ab-stats.ts';
import { benchDeps, scratchDatabase } from './in-process.ts';

const { values: args } = parseArgs({
  options: {
    'pg-url': { type: 'string' },
    rounds: { type: 'string', default: '7' },
    ops: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '32' },
    polymorphic: { type: 'boolean', default: false },
  },
});
const serverUrl = args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rounds = Number(args.rounds);
const ops = Number(args.ops);
const concurrency = Number(args.concurrency);

const scratch = await scratchDatabase(serverUrl, 'atrium_layers');
const handle = await openDb({ databaseUrl: scratch.url, poolSize: 10 });
// The floor's pool (floors/common.ts): two pipelined connections, generic plans.
const floorSql = postgres(scratch.url, {
  max: 2,
  prepare: true,
  onnotice: () => {},
  connection: { timezone: 'UTC', plan_cache_mode: 'force_generic_plan' },
});

/** `ops` calls of `call`, `concurrency` in flight; this process's CPU per call in µs. */
async function cpuPerCall(call: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  const lane = async () => {
    while (next++ < ops) await call();
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ops;
}

try {
  await handle.migrate();
  const deps = benchDeps(handle, { apiKeyCacheTtlMs: 60_000, webhooksAllowPrivate: false }, 'silent');
  const created = await createEnvironment(deps, { name: 'layers' });
  const authorization = `Bearer ${created.api_key}`;
  const caller = createCaller(createInnerContext(deps, authorization));
  const org = await caller.organizations.create({
    name: 'Layers',
    domain_data: [{ domain: 'layers.example.com', state: 'verified' }],
  });
  const env = await authenticateApiKey(deps, authorization);
  const entry = procedureEntries(appRouter).find((e) => e.path === 'organizations.get');
  if (!entry) throw new Error('no organizations.get procedure');
  const procedure = () =>
    callProcedure(entry, createInnerContext(deps, authorization, 'req', undefined, env), { id: org.id });

  const layers: [string, () => Promise<unknown>][] = [
    [
      'sql',
      () =>
        floorSql`
        select json_build_object('object', 'organization', 'id', o.id, 'name', o.name,
          'allow_profiles_outside_organization', o.allow_profiles_outside_organization,
          'domains', coalesce((select json_agg(json_build_object('object', 'organization_domain', 'id', d.id,
            'organization_id', d.organization_id, 'domain', d.domain, 'state', d.state,
            'verification_strategy', d.verification_strategy, 'verification_token', d.verification_token,
            'created_at', d.created_at, 'updated_at', d.updated_at) order by d.created_at, d.id)
            from organization_domains d where d.organization_id = o.id), '[]'::json),
          'metadata', o.metadata, 'external_id', o.external_id, 'stripe_customer_id', o.billing_customer_id,
          'created_at', o.created_at, 'updated_at', o.updated_at)::text as j
        from organizations o where o.environment_id = ${env.id} and o.id = ${org.id}`.then((rows) =>
          JSON.stringify(JSON.parse(rows[0]?.j as string)),
        ),
    ],
    ['procedure', procedure],
    ['answer', () => procedure().then((data) => JSON.stringify(data))],
  ];
  if (args.polymorphic) {
    // As a server's shared code sees it: every API query procedure called first (most refuse
    // their empty input), so the tRPC, zod and Drizzle paths have met many shapes.
    const queries = procedureEntries(appRouter).filter((e) => e.type === 'query' && !e.path.startsWith('admin.'));
    for (let i = 0; i < 200; i++)
      for (const e of queries)
        await callProcedure(e, createInnerContext(deps, authorization, 'req', undefined, env), {}).catch(() => {});
    console.log(`called ${queries.length} query procedures 200 times each first`);
  }
  const figures = new Map<string, number[]>(layers.map(([name]) => [name, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const [name, call] of layers) {
      const micros = await cpuPerCall(call);
      if (round > 0) figures.get(name)?.push(micros);
    }
  }
  let below = 0;
  for (const [name] of layers) {
    const values = figures.get(name) ?? [];
    const m = median(values);
    console.log(
      `${name.padEnd(10)} ${m.toFixed(1).padStart(6)} us/call (+${(m - below).toFixed(1)}), rounds ${values.map((v) => v.toFixed(0)).join(', ')}`,
    );
    below = m;
  }
} finally {
  await floorSql.end();
  await handle.close();
  await scratch.drop();
}
