/**
 * `npx tsx bench/gc-summary.ts <file> [from]`: what a server's `--trace-gc-nvp` lines say of its
 * collections after `from` (a fraction of the run, default 0.6: the last 40 %, past the warm-up):
 * scavenges and their pauses, mark-compacts, and the bytes allocated, surviving a scavenge and
 * promoted to the old generation. Promotion is what drives the mark-compacts and their background
 * marking; a request's objects should die young (bench/README.md, "The sixteenth session").
 */
import { readFileSync } from 'node:fs';

const [file, fromArg] = process.argv.slice(2);
if (!file) throw new Error('usage: gc-summary.ts <trace-gc-nvp output> [from 0..1]');
const from = Number(fromArg ?? 0.6);

interface Collection {
  ms: number;
  pause: number;
  kind: string;
  fields: Map<string, number>;
}

const collections: Collection[] = [];
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const head = /(\d+) ms: pause=([\d.]+) mutator=[\d.]+ gc=(\w+)/.exec(line);
  if (!head) continue;
  const fields = new Map([...line.matchAll(/(\S+?)=([\d.]+)/g)].map((m) => [m[1] as string, Number(m[2])]));
  collections.push({ ms: Number(head[1]), pause: Number(head[2]), kind: head[3] as string, fields });
}
if (collections.length === 0) throw new Error(`no --trace-gc-nvp lines in ${file}`);
const first = collections[0]?.ms ?? 0;
const last = collections.at(-1)?.ms ?? 0;
const window = collections.filter((c) => c.ms >= first + (last - first) * from);
const scavenges = window.filter((c) => c.kind === 's');
const sum = (list: Collection[], field: string) => list.reduce((n, c) => n + (c.fields.get(field) ?? 0), 0);
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const allocated = sum(scavenges, 'allocated');
const promoted = sum(scavenges, 'promoted');
console.log(
  `${file}: ${((window.at(-1)?.ms ?? 0) - (window[0]?.ms ?? 0)).toFixed(0)} ms; ${scavenges.length} scavenges (pauses ${scavenges.reduce((n, c) => n + c.pause, 0).toFixed(0)} ms), ` +
    `${window.filter((c) => c.kind === 'mc').length} mark-compacts; allocated ${mb(allocated)} MB, survived ${mb(sum(scavenges, 'new_space_survived'))} MB, ` +
    `promoted ${mb(promoted)} MB (${((100 * promoted) / Math.max(allocated, 1)).toFixed(2)} % of allocated)`,
);
