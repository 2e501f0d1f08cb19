/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): self time by function and
 * by package, so the per-request cost can be read without a browser.
 *   npx tsx bench/profile-summary.ts bench/results/tmp/profiles/<file>.cpuprofile [top] [skip-seconds] [until-seconds]
 * `skip-seconds` leaves out the start of the profile (start-up, seeding); `until-seconds` its end,
 * so one profile of several scenarios can be read a scenario at a time (their times are in the
 * bench's log). Inclusive time counts
 * a sample for every function on its stack (once per function): for async functions only the
 * synchronous stretches between awaits are theirs.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  parent?: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top] [skip-seconds] [until-seconds]');
const top = Number(process.argv[3] ?? 30);
const skipUs = Number(process.argv[4] ?? 0) * 1e6;
const untilUs = process.argv[5] === undefined ? Number.POSITIVE_INFINITY : Number(process.argv[5]) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (const node of profile.nodes)
  for (const child of node.children ?? []) {
    const c = byId.get(child);
    if (c) c.parent = node.id;
  }
const self = new Map<number, number>();
let elapsed = 0;
profile.samples.forEach((id, i) => {
  elapsed += profile.timeDeltas[i] ?? 0;
  if (elapsed < skipUs || elapsed > untilUs) return;
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

function packageOf(url: string): string {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const m = /\/(db|routers|rest-facade|server|bench)\/src\//.exec(url) ?? /\/(bench)\//.exec(url);
  return m ? `atrium/${m[1]}` : url;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  const pkg = packageOf(url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
}

const inclusive = new Map<string, number>();
const nameOf = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;
};
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let node = byId.get(id); node; node = node.parent === undefined ? undefined : byId.get(node.parent)) {
    const name = nameOf(node);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
process.stdout.write(`total sampled ${(total / 1e6).toFixed(2)} s\n\nself time by package\n`);
for (const [name, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
  process.stdout.write(`${pct(us)}  ${name}\n`);
}
process.stdout.write('\nself time by function\n');
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${pct(us)}  ${name}\n`);
}
process.stdout.write('\ninclusive time by function\n');
for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${pct(us)}  ${name}\n`);
}

// Every sample charged to the innermost frame of Atrium's own code on its stack (the server
// bundle or any build of it in server/dist, as cpu-ab.ts runs them, or the sources): what each
// step costs with the library and native work it causes (a socket write under `writeOutcome`, a
// zod parse under the procedure that asked for it).
const OWN = /\/server\/dist\/[^/]+\.mjs|\/(db|routers|rest-facade|server|bench)\/(src|floors)\/|\/bench\/[^/]+\.ts/;
const owned = new Map<string, number>();
for (const [id, us] of self) {
  let owner = '(no Atrium frame: idle, GC, I/O callbacks)';
  for (let node = byId.get(id); node; node = node.parent === undefined ? undefined : byId.get(node.parent)) {
    if (OWN.test(node.callFrame.url)) {
      owner = nameOf(node).replace(/file:\/\/\/.*\//, '');
      break;
    }
  }
  owned.set(owner, (owned.get(owner) ?? 0) + us);
}
process.stdout.write('\nby innermost Atrium frame (self time of everything under it)\n');
for (const [name, us] of [...owned].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${pct(us)}  ${name}\n`);
}
