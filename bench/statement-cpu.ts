/**
 * `npx tsx bench/statement-cpu.ts <database-url> <a.sql>@<a.json> <b.sql>@<b.json> …`: PostgreSQL's
 * own CPU per execution of each statement (its text in a file, its parameters as a JSON array),
 * prepared and planned generically as Atrium's connections do. One connection runs each statement
 * `--runs` times in turn, round after round (`--rounds`, the first one not counted), and reads its
 * backend's utime + stime from /proc before and after each block, so statements compared with each
 * other see the same neighbours (bench/README.md, "The members page's statement against its floor's").
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '7' },
  },
});
const [url, ...specs] = positionals;
if (!url) throw new Error('usage: statement-cpu.ts <database-url> <file.sql>@<params.json> …');

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
