/**
 * `npx tsx bench/scim-cpu-ab.ts --variant base=server/dist/base.mjs --variant mine=server/dist/x.mjs
 * --variant floor=floor:scim` (node flags after a comma: `mine=server/dist/x.mjs,--cpu-prof`): the server's CPU per SCIM `POST /Users` (Okta's create body, as
 * bench/scim-load.ts sends it) of several builds and the SCIM create floor (bench/floors/scim.ts),
 * interleaved, `--concurrency` in flight (8, as the initial sync), and nothing else: no other
 * tenant reading (`scim_initial_sync` counts the other tenant's reads in Atrium's CPU, not in the
 * floor's; bench/README.md, "SCIM create CPU without the other tenant").
 *
 * A fresh PostgreSQL database, migrated by the first variant; each variant its own directory of its
 * own organization (as bench/scim.ts seeds one) and its own port. Per round, each variant in turn:
 * `--users` POSTs, and the server process's utime + stime from /proc before and after (every
 * thread), PostgreSQL's backends not counted. Round 0 (`--warmup` POSTs each) warms the JIT and is
 * not counted; medians of the other rounds are printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { abServerEnv, abSettings, cpuTicks, median, startArgs } from './ab-stats.ts';
import { seedDirectory } from './scim.ts';
import { oktaUserBody } from './scim-user.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '8' },
    port: { type: 'string', default: '19590' },
    'pg-url': { type: 'string' },
    variant: { type: 'string', multiple: true },
  },
});
// SCIM creates per block stand where the other A/B tools' requests do.
const settings = abSettings({ ...args, requests: args.users });
const { requests: users, warmup, rounds, concurrency, firstPort, adminUrl } = settings;
const outDir = join(root, 'bench', 'results', 'tmp', `scim-cpu-ab-${process.pid}`);
const log = (line: string) => console.log(`[scim-cpu-ab ${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Variant {
  name: string;
  script: string;
  /** Node flags added to the start command (`name=bundle,--cpu-prof`), as bench/cpu-ab.ts takes them. */
  flags: string[];
  floor: boolean;
  port: number;
  child?: ChildProcess;
  directory?: { id: string; token: string };
}

function variantOf(spec: string, i: number): Variant {
  const at = spec.indexOf('=');
  const [name, rest] = at < 0 ? [spec, ''] : [spec.slice(0, at), spec.slice(at + 1)];
  const [script = '', ...flags] = rest.split(',');
  if (script === 'floor:scim') return { name, script: 'bench/floors/scim.ts', flags, floor: true, port: firstPort + i };
  return { name, script, flags, floor: false, port: firstPort + i };
}

/** Atrium as `npm start` runs it (cpu-ab.ts's settings: no rate limit in the way, one process). */
function startAtrium(databaseUrl: string, variant: Variant): ChildProcess {
  return spawn(process.execPath, startArgs(root, variant.flags, variant.script), {
    cwd: root,
    env: abServerEnv(settings, { databaseUrl, port: variant.port, dataDir: join(outDir, `data-${variant.port}`) }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function atriumReady(child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Atrium exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('Atrium was not ready in time');
}

/** The floor, as bench/scim.ts starts it: ready once it prints `listening`. */
async function startFloor(databaseUrl: string, variant: Variant): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...variant.flags, '--import', 'tsx', variant.script], {
    cwd: root,
    env: { ...process.env, PORT: String(variant.port), DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (line.startsWith('listening')) {
      lines.close();
      return child;
    }
  }
  throw new Error(`the floor exited with ${child.exitCode} before it listened`);
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

let serial = 0;
/** `count` POSTs, `concurrency` at a time; every one must answer 201. */
async function sync(variant: Variant, count: number): Promise<void> {
  const { id, token } = variant.directory as { id: string; token: string };
  const url = `http://127.0.0.1:${variant.port}/scim/v2/${id}/Users`;
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left--;
      const i = ++serial;
      const userName = `cpu${i}@bench-directory.example.com`;
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/scim+json' },
        body: JSON.stringify(oktaUserBody(userName, `00u${i}`, i)),
      });
      const text = await res.text();
      if (res.status !== 201)
        throw new Error(`${variant.name}: POST /Users answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const variants = (args.variant ?? ['main=']).map(variantOf);
  const first = variants.find((v) => !v.floor);
  if (!first) throw new Error('one variant at least must be an Atrium build (it migrates the database)');
  const dbName = `atrium_scim_cpu_ab_${Date.now()}`;
  const pg = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await pg.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    first.child = startAtrium(url.toString(), first);
    await atriumReady(first.child, first.port);
    const created = await fetch(`http://127.0.0.1:${first.port}/trpc/admin.environments.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${settings.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'scim cpu a/b' }),
    });
    const env = ((await created.json()) as { result: { data: { environment_id: string } } }).result.data;
    for (const [i, variant] of variants.entries()) {
      const seeded = await seedDirectory(
        (text, params) => sql.unsafe(text, params as never[]),
        env.environment_id,
        `scim cpu ${i}`,
      );
      variant.directory = { id: seeded.directoryId, token: seeded.token };
      if (variant.child) continue;
      if (variant.floor) variant.child = await startFloor(url.toString(), variant);
      else {
        variant.child = startAtrium(url.toString(), variant);
        await atriumReady(variant.child, variant.port);
      }
    }
    const figures = new Map<string, number[]>();
    for (let round = 0; round <= rounds; round++) {
      for (const variant of variants) {
        const pid = variant.child?.pid as number;
        const n = round === 0 ? warmup : users;
        const before = cpuTicks(pid);
        const started = performance.now();
        await sync(variant, n);
        const seconds = (performance.now() - started) / 1000;
        const micros = ((cpuTicks(pid) - before) * 10_000) / n;
        if (round === 0) continue;
        figures.set(variant.name, [...(figures.get(variant.name) ?? []), micros]);
        log(`round ${round} ${variant.name}: ${Math.round(micros)} us/user (${Math.round(n / seconds)} users/s)`);
      }
      if (round > 0)
        log(
          `round ${round}/${rounds} done; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ', 3).join(' ')}`,
        );
    }
    for (const variant of variants) {
      const values = figures.get(variant.name) ?? [];
      log(
        `${variant.name}: median ${Math.round(median(values))} us/user, min ${Math.round(Math.min(...values))} (rounds: ${values.map(Math.round).join(', ')})`,
      );
    }
  } finally {
    for (const variant of variants) await stop(variant.child);
    await sql.end();
    await pg.unsafe(`drop database if exists ${dbName} with (force)`);
    await pg.end();
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
