// node profdiff.mjs A.cpuprofile B.cpuprofile skipSecA skipSecB requests[/requestsB] [top]
// (`36000/64000`: A served 36,000 requests in its window and B 64,000, a floor beside Atrium)
import { readFileSync } from 'node:fs';
const [fa, fb, sa, sb, reqs, top = '40', mode = 'self'] = process.argv.slice(2);
function load(file, skip) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
  const self = new Map(); let t = 0; let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < skip * 1e6) continue;
    const dt = p.timeDeltas[i + 1] ?? 0;
    let n = byId.get(p.samples[i]);
    if (n.callFrame.functionName === '(idle)') continue;
    total += dt;
    if (mode === 'self') { const k = key(n); self.set(k, (self.get(k) ?? 0) + dt); }
    else { const seen = new Set(); let id = n.id; while (id !== undefined) { const m = byId.get(id); const k = key(m); if (!seen.has(k)) { seen.add(k); self.set(k, (self.get(k) ?? 0) + dt); } id = parent.get(id); } }
  }
  return { self, total };
}
const A = load(fa, Number(sa)), B = load(fb, Number(sb));
const [n, nb = n] = reqs.split('/').map(Number);
console.log(`total non-idle us/req: A ${(A.total / n).toFixed(1)}  B ${(B.total / nb).toFixed(1)}`);
const keys = new Set([...A.self.keys(), ...B.self.keys()]);
const rows = [...keys].map((k) => [k, (A.self.get(k) ?? 0) / n, (B.self.get(k) ?? 0) / nb]).sort((x, y) => (y[1] - y[2]) - (x[1] - x[2]));
for (const [k, a, b] of rows.slice(0, Number(top))) console.log(`${(a - b).toFixed(2).padStart(7)}  A ${a.toFixed(2).padStart(6)}  B ${b.toFixed(2).padStart(6)}  ${k}`);
