/**
 * An audit log export of many events on one process: `npm run bench:audit-export` (bench/README.md,
 * "Audit log export").
 *
 * Seeds `--events` events of one organization (one INSERT … SELECT generate_series, not one request
 * each), creates an export over the API, runs the export worker's build, downloads the CSV through
 * the signed link, and reports rows, bytes, seconds and the process's peak RSS and heap during the
 * build and the download (process.memoryUsage() sampled every 20 ms), beside the baseline before
 * each. The heap peak counts garbage not yet collected, so each phase also forces a full collection
 * every 250 ms and reports the peak heap right after one (what the phase really holds) and the heap
 * after a last collection at its end. Flat memory means the after-collection figures do not grow
 * with `--events`. Runs under `node --expose-gc` (the npm script).
 *
 * The server runs in this process on PGlite (in memory), or on `DATABASE_URL` when set.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createApp } from '@atrium/rest-facade';
import { buildNextAuditLogExport, createEnvironment, scopeOf, seedAuditLogEvents } from '@atrium/routers';
import { benchDeps, openBenchDb } from './in-process.ts';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '100000' } } });
const events = Number(args.events);
const log = (line: string) => process.stdout.write(`${line}\n`);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const handle = await openBenchDb();
const deps = benchDeps(handle, { apiKeyCacheTtlMs: 2_000 });
const server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false }).handler);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
deps.tokens.issuer = base;

const env = await createEnvironment(deps, { name: `bench-audit-export-${Date.now()}` });
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${env.api_key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run under node --expose-gc (npm run bench:audit-export)');

/**
 * Runs `work` while sampling memory: the baseline before it (after a collection), the peaks of
 * RSS and heap (every 20 ms), the peak heap right after a forced full collection (every 250 ms:
 * what is retained, not garbage) and the heap after a collection once `work` is done.
 */
async function measured<T>(work: () => Promise<T>) {
  gc?.();
  const before = process.memoryUsage();
  const peak = { rss: before.rss, heap: before.heapUsed, retained: before.heapUsed };
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heap = Math.max(peak.heap, m.heapUsed);
  }, 20);
  const collector = setInterval(() => {
    gc?.();
    peak.retained = Math.max(peak.retained, process.memoryUsage().heapUsed);
  }, 250);
  const started = performance.now();
  try {
    const result = await work();
    const seconds = (performance.now() - started) / 1000;
    gc?.();
    const after = process.memoryUsage().heapUsed;
    return { result, seconds, before, peak, after };
  } finally {
    clearInterval(sampler);
    clearInterval(collector);
  }
}

const org = await api('POST', '/organizations', { name: 'Bench' });
const seedStarted = performance.now();
await seedAuditLogEvents(await scopeOf(deps, env.environment_id), org.id, events);
log(`seeded ${events} events in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

const created = await api('POST', '/audit_logs/exports', {
  organization_id: org.id,
  range_start: new Date(Date.now() - (events + 60) * 1000).toISOString(),
  range_end: new Date().toISOString(),
});
const build = await measured(async () => {
  while (await buildNextAuditLogExport(deps)) {}
});
const ready = await api('GET', `/audit_logs/exports/${created.id}`);
if (ready.state !== 'ready') throw new Error(`export ${created.id} is ${ready.state}`);

const download = await measured(async () => {
  const res = await fetch(ready.url);
  if (!res.ok || !res.body) throw new Error(`download: ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 10) lines += 1;
  }
  return { bytes, rows: lines - 1 };
});

log(`rows ${download.result.rows} (of ${events}), bytes ${download.result.bytes} (${mib(download.result.bytes)})`);
for (const [name, run] of [
  ['build', build],
  ['download', download],
] as const) {
  log(
    `${name}: ${run.seconds.toFixed(2)} s; RSS ${mib(run.before.rss)} -> peak ${mib(run.peak.rss)}, ` +
      `heap ${mib(run.before.heapUsed)} -> peak ${mib(run.peak.heap)}; after gc: ` +
      `peak ${mib(run.peak.retained)}, at the end ${mib(run.after)}`,
  );
}
server.close();
await handle.close();
