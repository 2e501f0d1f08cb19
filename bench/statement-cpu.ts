/**
 * `npx tsx bench/statement-cpu.ts <database-url> <a.sql>@<a.json> <b.sql>@<b.json> …`: PostgreSQL's
 * own CPU per execution of each statement (its text in a file, its parameters as a JSON array),
 * prepared and planned generically as Atrium's connections do. One connection runs each statement
 * `--runs` times in turn, round after round (`--rounds`, the first one not counted), and reads its
 * backend's utime + stime from /proc before and after each block, so statements compared with each
 * other see the same neighbours (bench/README.md, "The members page's statement against its floor's").
 *
 * `--members` prints, instead, the members page's statement as Atrium sends it (its text and
 * parameters, for the files above) for the first page of the largest organization of the database.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openDb } from '@atrium/db';
import postgres from 'postgres';
import { pageOfMembers } from '../routers/src/client-api/members/store.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '7' },
    members: { type: 'boolean', default: false },
  },
});
const [url, ...specs] = positionals;
if (!url) throw new Error('usage: statement-cpu.ts <database-url> [--members | <file.sql>@<params.json> …]');

if (args.members) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [largest] = await sql<{ env: string; org: string }[]>`select environment_id as env, organization_id as org
    from organization_memberships group by 1, 2 order by count(*) desc limit 1`;
  await sql.end();
  if (!largest) throw new Error('no organization has members');
  const handle = await openDb({ databaseUrl: url });
  const client = (handle.db as unknown as { $client: { options: { debug?: unknown } } }).$client;
  client.options.debug = (_connection: number, text: string, parameters: unknown[]) => {
    if (text.includes('page_roles')) process.stdout.write(`${text}\n-- ${JSON.stringify(parameters)}\n`);
  };
  await pageOfMembers(handle.db, largest.env, largest.org, { limit: 10, order: 'asc' }, {});
  await handle.close();
} else {
  const sql = postgres(url, {
    max: 1,
    prepare: true,
    onnotice: () => {},
    connection: { plan_cache_mode: 'force_generic_plan', timezone: 'UTC' },
  });
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const ticks = () => {
    const stat = readFileSync(`/proc/${backend?.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const statements = specs.map((spec) => {
    const [file = '', params = ''] = spec.split('@');
    return { file, text: readFileSync(file, 'utf8'), params: JSON.parse(readFileSync(params, 'utf8')) as never[] };
  });
  const runs = Number(args.runs);
  const figures = new Map<string, number[]>();
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const statement of statements) {
      const before = ticks();
      for (let i = 0; i < runs; i++) await sql.unsafe(statement.text, statement.params, { prepare: true });
      // A clock tick is 10 ms of the backend's CPU.
      const micros = ((ticks() - before) * 10_000) / runs;
      if (round > 0) figures.set(statement.file, [...(figures.get(statement.file) ?? []), micros]);
    }
  }
  for (const [file, values] of figures) {
    const sorted = values.map(Math.round).sort((a, b) => a - b);
    console.log(`${file}: median ${sorted[Math.floor(sorted.length / 2)]} us, rounds ${sorted.join(' ')}`);
  }
  await sql.end();
}
