/**
 * `npm run bench`: Atrium against a fresh PostgreSQL database, seeded set-based, every
 * scenario driven by autocannon from its own process, plus a bare node:http baseline in the
 * same run. Writes bench/results/<date>.json, .md and .svg. See bench/README.md.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pidusage from 'pidusage';
import postgres from 'postgres';
import {
  FLOORS,
  PEER_PAIRINGS,
  type PeerSeed,
  peerCommand,
  peerSeedConfig,
  peerSpec,
  type RequestSpec,
  seedPeer,
  shapeOf,
} from './companions.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { renderMarkdown, renderSvg } from './report.ts';
import type { BenchResults, ScenarioRun, ScimResults } from './results.ts';
import { runScimBench, SCIM_SCENARIOS, type ScimScenario, SYNC_CONCURRENCY } from './scim.ts';
import {
  type Exec,
  type GroupSeed,
  installSeedHelpers,
  seededDomain,
  seededOrganizationId,
  seededUserId,
  seedGroup,
  seedOrganizations,
  sharedDomain,
} from './seed.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = join(root, 'bench', 'results');
const tmpDir = join(resultsDir, 'tmp');

const { values: args } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    scenarios: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    port: { type: 'string', default: '18480' },
    'pg-url': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    /** Extra node flags for the Atrium process only: `--node-options=--max-semi-space-size=4` (with `=`: parseArgs refuses a separate value starting with `--`). */
    'node-options': { type: 'string', default: '' },
    /**
     * Node flags for the floors only: `--floor-node-options="--max-semi-space-size=6 --heap-growing-percent=35 --max-old-space-size=128"` runs them under
     * Atrium's own start flags (its young-generation size, chosen for RSS), to compare like with like.
     */
    'floor-node-options': { type: 'string', default: '' },
    /**
     * How Atrium runs: `start` (as `npm start` does: the esbuild bundle server/dist/main.mjs,
     * built first, run by plain node with the start script's flags) or `tsx` (the sources
     * through the tsx loader, for comparison).
     */
    server: { type: 'string', default: 'start' },
    /**
     * A bundle built beforehand (`node server/build.mjs server/dist/x.mjs`) that `start` runs
     * instead of building the tree: runs of two commits' builds can then alternate (A/B).
     */
    bundle: { type: 'string' },
    'keep-db': { type: 'boolean', default: false },
    'skip-baseline': { type: 'boolean', default: false },
    out: { type: 'string' },
    /** Runs the scenario list this many times per size, interleaved; reports the median run. */
    repeat: { type: 'string', default: '1' },
    /**
     * Where the API keys' rate limits are counted: `postgres` (the default on PostgreSQL: one
     * upsert per lease of 1 % of the limit in the UNLOGGED rate_limit_windows), `memory` (per process), or `off`.
     * Run a scenario under two of them to read the shared limit's cost per request.
     */
    'rate-limit-store': { type: 'string', default: 'postgres' },
    /**
     * API processes on the one port (`ATRIUM_PROCESSES`, node:cluster). Atrium's CPU column then
     * sums the primary and its workers; its RSS columns are the primary's alone.
     */
    processes: { type: 'string', default: '1' },
    /** Leave out the floors (bench/floors/*.ts), which otherwise run beside their scenarios. */
    'skip-floors': { type: 'boolean', default: false },
    /**
     * A checkout of the public WorkOS emulator (`workos/emulate`, never vendored): run it in the
     * same rounds for the scenarios of `PEER_PAIRINGS` and report Atrium / it.
     */
    peer: { type: 'string' },
    /**
     * Before seeding: 20,000 creates through the API into an environment of its own, then its
     * domains filter against its first page, with no ANALYZE but Atrium's own (issue #35).
     */
    'statistics-check': { type: 'boolean', default: false },
    /** Users of the SCIM initial sync (`scim_initial_sync`; the issue's figure is 10,000), for shorter exploratory runs. */
    'scim-users': { type: 'string', default: '10000' },
    /** Requests the SCIM initial sync keeps in flight (the issue's figure is 8): the sync rate against the other tenant's p95. */
    'scim-concurrency': { type: 'string', default: String(SYNC_CONCURRENCY) },
  },
});

const sizes = args.sizes
  ? args.sizes.split(',').map((s) => Number(s.replaceAll('_', '')))
  : args.full
    ? [1_000, 100_000, 1_000_000]
    : [1_000, 100_000];
const duration = Number(args.duration);
const repeat = Math.max(1, Number(args.repeat));
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const port = Number(args.port);
const adminUrl = args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = args.scenarios ? new Set(args.scenarios.split(',')) : undefined;
/** The directory sync scenarios chosen (bench/scim.ts): run once, after the organization sizes. */
const scimScenarios = new Set<ScimScenario>(SCIM_SCENARIOS.filter((name) => !only || only.has(name)));
/** Whether any organization scenario is chosen: a run of SCIM scenarios alone seeds no organization sizes. */
const organizationScenarios = !only || [...only].some((name) => !(SCIM_SCENARIOS as readonly string[]).includes(name));

const ADMIN_TOKEN = `atrium_admin_${'b'.repeat(20)}${Date.now().toString().padStart(20, '0')}`;
const baseUrl = `http://127.0.0.1:${port}`;

function log(line: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

// ---------------------------------------------------------------- processes

interface Started {
  child: ChildProcess;
  readyMs: number;
}

function nodeArgs(script: string, extra: string[] = []): string[] {
  return [...extra, '--import', 'tsx', script];
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;

/**
 * Atrium runs exactly as `npm start` runs it, node flags included, minus npm itself (so the
 * measured pid is the server's): `npm start` must be `node [flags] <script>`.
 */
function startCommand(): { flags: string[]; script: string } {
  const parts = (pkg.scripts?.start ?? '').trim().split(/\s+/);
  const script = parts.at(-1);
  if (parts[0] !== 'node' || !script) throw new Error('bench expects "npm start" to be "node [flags] <script>"');
  return { flags: parts.slice(1, -1), script };
}

function serverArgs(extra: string[]): string[] {
  const { flags, script } = startCommand();
  return args.server === 'tsx'
    ? nodeArgs('server/src/main.ts', [...flags, ...extra])
    : [...flags, ...extra, args.bundle ? resolve(root, args.bundle) : join(root, script)];
}

async function waitFor(url: string, child: ChildProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${url} was not ready within ${limitMs} ms`);
}

/** Refuses a port something already listens on: its /readyz would be mistaken for ours. */
async function assertPortFree(p: number): Promise<void> {
  const inUse = await new Promise<boolean>((resolvePort) => {
    const socket = connect({ port: p, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolvePort(true);
    });
    socket.once('error', () => resolvePort(false));
  });
  if (inUse) throw new Error(`port ${p} is in use; pick another with --port`);
}

/** Starts Atrium and measures spawn → /readyz answering 200 (includes migrations). */
const MASTER_KEY = randomBytes(32).toString('base64');

async function startAtrium(databaseUrl: string, logName: string): Promise<Started> {
  await assertPortFree(port);
  const extra = args['node-options'] ? args['node-options'].split(/\s+/).filter(Boolean) : [];
  if (args['cpu-prof']) extra.push('--cpu-prof', `--cpu-prof-dir=${join(tmpDir, 'profiles')}`);
  const out = createWriteStream(join(tmpDir, logName));
  const t0 = performance.now();
  const child = spawn(process.execPath, serverArgs(extra), {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      // PostgreSQL deployments must name the key that encrypts signing keys.
      ATRIUM_MASTER_KEY: MASTER_KEY,
      // The limiter stays on (its cost is part of every request) but never refuses the load.
      RATE_LIMIT_REQUESTS: '1000000000',
      RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS: '1000000000',
      ...(args['rate-limit-store'] === 'off'
        ? { RATE_LIMIT: 'off' }
        : { RATE_LIMIT_STORE: args['rate-limit-store'] ?? 'postgres' }),
      ATRIUM_PROCESSES: args.processes ?? '1',
      ATRIUM_DATA_DIR: join(tmpDir, 'data'),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  await waitFor(`${baseUrl}/readyz`, child, 60_000);
  return { child, readyMs: performance.now() - t0 };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

interface Measured {
  result: LoadResult;
  rssMaxMb: number | null;
  cpuAvg: number | null;
  /** CPU seconds of the measured run by process (Linux only). */
  cpuSeconds: CpuSeconds | null;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on every Linux in practice). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of one process in ticks, from /proc (undefined when it is gone or not Linux). */
function ticksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The parent pid of one process, from /proc (undefined when it is gone or not Linux). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The numeric entries of /proc (every process), or none off Linux. */
function processIds(): number[] {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * The CPU ticks of the server and of its child processes (the API workers of `--processes n`,
 * node:cluster), by pid: with several processes every one of them counts, not the primary alone.
 */
function serverTicks(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  const own = ticksOf(pid);
  if (own === undefined) return ticks;
  ticks.set(pid, own);
  for (const child of processIds()) {
    if (child === pid || parentOf(child) !== pid) continue;
    const t = ticksOf(child);
    if (t !== undefined) ticks.set(child, t);
  }
  return ticks;
}

/**
 * The bench's database, once created: PostgreSQL's CPU is counted for its backends alone (and
 * the server's own processes), not for those of other databases on the same server.
 */
let benchDatabase: string | undefined;

/**
 * Is this PostgreSQL process one to count? A backend shows `postgres: <cluster>: <user> <database>
 * <client> <state>` as its command line (PostgreSQL's process title): only the bench database's
 * backends count, so another session's tests on the same server do not land in the bench's
 * figures; the server's own processes (WAL writer, checkpointer, …: no client address) count too.
 */
function countsForBench(pid: number): boolean {
  if (benchDatabase === undefined) return true;
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return false;
  }
  const backend = /\(\d+\)|\[local\]/.test(title);
  return !backend || title.includes(` ${benchDatabase} `);
}

/**
 * The CPU ticks of the PostgreSQL server processes that serve the bench: its database's backends,
 * the WAL writer and the other server processes (`countsForBench`).
 */
function postgresTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const entry of processIds()) {
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    if (!countsForBench(entry)) continue;
    const t = ticksOf(Number(entry));
    if (t !== undefined) ticks.set(Number(entry), t);
  }
  return ticks;
}

/**
 * CPU seconds spent by Atrium, PostgreSQL and the load generator over the measured run, read
 * from /proc at its start and end. Per request, these are steadier than throughput on a VM
 * whose speed drifts: they say where a request's cost lies, whatever the neighbours do.
 * PostgreSQL processes that start during the run count from zero; ones that end are lost.
 */
class CpuSplit {
  private readonly start: { server: Map<number, number>; load?: number; pg: Map<number, number> };
  constructor(
    private readonly serverPid: number | undefined,
    private readonly loadPid: number | undefined,
  ) {
    this.start = {
      server: serverPid === undefined ? new Map() : serverTicks(serverPid),
      load: loadPid === undefined ? undefined : ticksOf(loadPid),
      pg: postgresTicks(),
    };
  }
  end(): CpuSeconds | null {
    const server = this.serverPid === undefined ? new Map<number, number>() : serverTicks(this.serverPid);
    const load = this.loadPid === undefined ? undefined : ticksOf(this.loadPid);
    if (!server.size || !this.start.server.size) return null;
    const spent = (now: Map<number, number>, before: Map<number, number>) => {
      let sum = 0;
      for (const [pid, t] of now) sum += t - (before.get(pid) ?? 0);
      return sum;
    };
    const seconds = (t: number) => Math.round((t / CLOCK_TICKS) * 100) / 100;
    return {
      server: seconds(spent(server, this.start.server)),
      postgres: seconds(spent(postgresTicks(), this.start.pg)),
      load: load === undefined || this.start.load === undefined ? null : seconds(load - this.start.load),
    };
  }
}

interface CpuSeconds {
  server: number;
  postgres: number;
  load: number | null;
}

/**
 * The kernel's peak RSS of a process (`VmHWM`), reset to its current RSS by writing 5 to its
 * `clear_refs`: the exact peak over the measured run, which 500 ms samples can miss. Linux only.
 */
const peakRss = {
  reset(pid: number): boolean {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      return true;
    } catch {
      return false;
    }
  },
  read(pid: number): number | undefined {
    try {
      const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      return kb === undefined ? undefined : Number(kb) * 1024;
    } catch {
      return undefined;
    }
  },
};

/** Runs one load in its own process; samples the target's RSS and CPU while it measures. */
async function runLoad(spec: LoadSpec, targetPid: number | undefined): Promise<Measured> {
  const specFile = join(tmpDir, `spec-${process.pid}.json`);
  writeFileSync(specFile, JSON.stringify(spec));
  const child = spawn(process.execPath, nodeArgs('bench/load.ts', []).concat(specFile), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let sampler: NodeJS.Timeout | undefined;
  let rssMax = 0;
  const cpu: number[] = [];
  let resultLine: string | undefined;
  let split: CpuSplit | undefined;
  let peakReset = false;
  let cpuSeconds: CpuSeconds | null = null;
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => {
    if (line === 'measuring') {
      split = new CpuSplit(targetPid, child.pid);
      if (targetPid !== undefined) peakReset = peakRss.reset(targetPid);
    } else if (line.startsWith('{')) {
      cpuSeconds = split?.end() ?? null;
      if (peakReset && targetPid !== undefined) rssMax = Math.max(rssMax, peakRss.read(targetPid) ?? 0);
    }
    if (line === 'measuring' && targetPid !== undefined) {
      sampler = setInterval(() => {
        pidusage(targetPid).then(
          (stat) => {
            rssMax = Math.max(rssMax, stat.memory);
            cpu.push(stat.cpu);
          },
          () => {},
        );
      }, 500);
    } else if (line.startsWith('{')) resultLine = line;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (sampler) clearInterval(sampler);
  if (code !== 0 || !resultLine) throw new Error(`load generator exited with ${code}`);
  // The first CPU sample covers the idle time before the load; leave it out.
  const busy = cpu.slice(1);
  return {
    result: JSON.parse(resultLine) as LoadResult,
    rssMaxMb: rssMax > 0 ? Math.round((rssMax / 1024 / 1024) * 10) / 10 : null,
    cpuAvg: busy.length > 0 ? Math.round(busy.reduce((a, b) => a + b, 0) / busy.length) : null,
    cpuSeconds,
  };
}

// ---------------------------------------------------------------- scenarios

interface BenchContext {
  size: number;
  apiKey: string;
  /** The writes go to an environment of their own, so they never change what the reads see. */
  writeApiKey: string;
  /** An environment of its own whose organizations share domains, five to a domain. */
  sharedApiKey: string;
  clientId: string;
  group: GroupSeed | undefined;
  groupReason: string | undefined;
  agentToken: string;
  agentTokenKind: string;
  /** A widget token of seeded user 1 in the group's organization (1,000 members), minted each round (15-min TTL). */
  widgetToken: string | undefined;
  widgetReason: string | undefined;
}

/** What the official widgets send besides the token (WIDGETS-API.md §1.3). */
const widgetHeaders = (token: string) => ({
  Authorization: `Bearer ${token}`,
  'WorkOS-Widgets-Version': '1',
  'WorkOS-Widgets-Type': 'user-management',
  'Content-Type': 'application/json',
});

/** A widget token for seeded user 1 of the group's organization, or why there is none. */
async function mintWidgetToken(ctx: BenchContext): Promise<void> {
  if (!ctx.group) {
    ctx.widgetReason = ctx.groupReason ?? 'no members were seeded';
    return;
  }
  const res = await fetch(`${baseUrl}/widgets/token`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ctx.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      organization_id: ctx.group.organizationId,
      user_id: seededUserId(1),
      scopes: ['widgets:users-table:manage'],
    }),
  });
  const text = await res.text();
  if (res.status === 201) ctx.widgetToken = (JSON.parse(text) as { token: string }).token;
  else ctx.widgetReason = `POST /widgets/token answered ${res.status}: ${text.slice(0, 200)}`;
}

interface Scenario {
  name: string;
  title: string;
  /** Returns the request to drive, or the reason the scenario cannot run. */
  build(ctx: BenchContext): Omit<LoadSpec, 'url' | 'connections' | 'warmupSeconds' | 'durationSeconds'> | string;
  note?: (ctx: BenchContext) => string | undefined;
}

/** A spread of seeded organization numbers, 1..size, the same for every scenario. */
function sample(size: number, count = 1_000): number[] {
  const out: number[] = [];
  const step = size / Math.min(count, size);
  for (let i = 0; i < Math.min(count, size); i += 1) out.push(Math.max(1, Math.floor(i * step + step / 2)));
  return out;
}

const DEEP_PAGE = 10_000;
const deepPageOf = (size: number) => Math.max(2, Math.min(DEEP_PAGE, Math.floor(size / 100)));

const authed = (ctx: BenchContext) => ({ Authorization: `Bearer ${ctx.apiKey}` });
const json = (ctx: BenchContext) => ({ ...authed(ctx), 'Content-Type': 'application/json' });
const writing = (ctx: BenchContext) => ({
  Authorization: `Bearer ${ctx.writeApiKey}`,
  'Content-Type': 'application/json',
});

/** The write environment's organizations: seeded numbers far above any read table size. */
const WRITE_BASE = 10_000_000;
const WRITE_ORGS = 1_000;
/** The shared-domains environment's organizations: seeded numbers above the write environment's. */
const SHARED_BASE = 20_000_000;

const SCENARIOS: Scenario[] = [
  {
    name: 'get_organization',
    title: 'GET organization by id',
    build: (ctx) => ({
      method: 'GET',
      paths: sample(ctx.size).map((n) => `/organizations/${seededOrganizationId(n)}`),
      headers: authed(ctx),
    }),
  },
  {
    name: 'trpc_get_organization',
    title: 'GET organization by id over tRPC (/trpc)',
    // What a TypeScript frontend's `organizations.get.query({ id })` sends (httpLink, no batching).
    build: (ctx) => ({
      method: 'GET',
      paths: sample(ctx.size).map(
        (n) => `/trpc/organizations.get?input=${encodeURIComponent(JSON.stringify({ id: seededOrganizationId(n) }))}`,
      ),
      headers: authed(ctx),
    }),
  },
  {
    name: 'list_first_page',
    title: 'list first page (limit=10)',
    build: (ctx) => ({ method: 'GET', paths: ['/organizations?limit=10'], headers: authed(ctx) }),
  },
  {
    name: 'list_page1_limit100',
    title: 'list page 1 (limit=100)',
    build: (ctx) => ({ method: 'GET', paths: ['/organizations?limit=100'], headers: authed(ctx) }),
  },
  {
    name: 'list_deep_page',
    title: 'list deep page (limit=100, after cursor)',
    // Page p of a desc walk over the seeded rows starts after seeded row size-(p-1)*100+1.
    build: (ctx) => ({
      method: 'GET',
      paths: [
        `/organizations?limit=100&after=${seededOrganizationId(ctx.size - (deepPageOf(ctx.size) - 1) * 100 + 1)}`,
      ],
      headers: authed(ctx),
    }),
    note: (ctx) => `page ${deepPageOf(ctx.size)}`,
  },
  {
    name: 'list_domains_filter',
    title: 'list with a domains filter',
    build: (ctx) => ({
      method: 'GET',
      paths: sample(ctx.size).map((n) => `/organizations?domains=${seededDomain(n)}`),
      headers: authed(ctx),
    }),
  },
  {
    name: 'list_domains_shared',
    title: 'list with a domains filter, 5 organizations per domain',
    // Its own environment of `size` organizations, so the other scenarios read what they always did.
    build: (ctx) => ({
      method: 'GET',
      paths: sample(ctx.size).map((n) => `/organizations?domains=${sharedDomain(SHARED_BASE + n)}`),
      headers: { Authorization: `Bearer ${ctx.sharedApiKey}` },
    }),
  },
  {
    name: 'list_group_memberships',
    title: 'list group memberships',
    build: (ctx) =>
      ctx.group
        ? {
            method: 'GET',
            paths: [
              `/organizations/${ctx.group.organizationId}/groups/${ctx.group.groupId}/organization-memberships?limit=10`,
            ],
            headers: authed(ctx),
          }
        : (ctx.groupReason ?? 'groups were not seeded'),
  },
  {
    name: 'list_memberships',
    title: 'list organization memberships (limit=10)',
    // The memberships of the group's organization (1,000 members), as the peer's side-by-side list has it.
    build: (ctx) =>
      ctx.group
        ? {
            method: 'GET',
            paths: [`/user_management/organization_memberships?organization_id=${ctx.group.organizationId}&limit=10`],
            headers: authed(ctx),
          }
        : (ctx.groupReason ?? 'memberships were not seeded'),
  },
  {
    name: 'jwks',
    title: 'JWKS',
    build: (ctx) => ({ method: 'GET', paths: [`/sso/jwks/${ctx.clientId}`], headers: {} }),
  },
  {
    name: 'validate_agent_token',
    title: 'validate an agent access token',
    build: (ctx) => ({
      method: 'POST',
      paths: ['/agents/credentials/validate'],
      headers: json(ctx),
      body: JSON.stringify({ type: 'access_token', credential: ctx.agentToken }),
    }),
    note: (ctx) => ctx.agentTokenKind,
  },
  {
    name: 'widgets_members_list',
    title: 'widgets: list members (widget token, 1,000 members)',
    // The UsersManagement widget's first page: client-token verification (environment, session,
    // membership) on every request, then the members page.
    build: (ctx) =>
      ctx.widgetToken
        ? { method: 'GET', paths: ['/_widgets/UserManagement/members'], headers: widgetHeaders(ctx.widgetToken) }
        : (ctx.widgetReason ?? 'no widget token'),
  },
  {
    name: 'widgets_organizations',
    title: 'widgets: the caller organizations (widget token)',
    // The lightest client route: mostly the per-request token verification (environment by
    // client id, RS256, the live session joined to its membership), against get_organization's cached API key.
    build: (ctx) =>
      ctx.widgetToken
        ? { method: 'GET', paths: ['/_widgets/UserManagement/organizations'], headers: widgetHeaders(ctx.widgetToken) }
        : (ctx.widgetReason ?? 'no widget token'),
  },
  {
    name: 'graphql_organization',
    title: 'client GraphQL: organization(id) { id name }',
    build: (ctx) =>
      ctx.widgetToken && ctx.group
        ? {
            method: 'POST',
            paths: ['/client/graphql'],
            headers: {
              ...widgetHeaders(ctx.widgetToken),
              Accept: 'application/graphql-response+json, application/json',
            },
            body: JSON.stringify({
              query: 'query Organization($id: ID!) { organization(id: $id) { id name } }',
              variables: { id: ctx.group.organizationId },
            }),
          }
        : (ctx.widgetReason ?? 'no widget token'),
  },
  {
    name: 'create_organization',
    title: 'create organization (durable)',
    build: (ctx) => ({
      method: 'POST',
      paths: ['/organizations'],
      headers: writing(ctx),
      body: JSON.stringify({ name: 'Bench created {n}', metadata: { source: 'bench' } }),
    }),
  },
  {
    name: 'audit_log_events_create',
    title: 'create audit log event (durable)',
    // Upstream's example event, for one of the write environment's organizations; `occurred_at`
    // a minute before the run (within retention, not ahead of the clock). One INSERT, shared by
    // the events sent meanwhile (group commit, docs/audit-logs.md).
    build: (ctx) => ({
      method: 'POST',
      paths: ['/audit_logs/events'],
      headers: writing(ctx),
      body: JSON.stringify({
        organization_id: '{pick}',
        event: {
          action: 'user.signed_in',
          occurred_at: new Date(Date.now() - 60_000).toISOString(),
          actor: { id: 'user_{n}', type: 'user', name: 'Bench', metadata: { role: 'admin' } },
          targets: [{ id: 'team_{n}', type: 'team' }],
          context: { location: '203.0.113.7', user_agent: 'bench' },
          metadata: { source: 'bench' },
        },
      }),
      picks: sample(WRITE_ORGS).map((n) => seededOrganizationId(WRITE_BASE + n)),
    }),
  },
  {
    name: 'create_domain',
    title: 'create domain',
    build: (ctx) => ({
      method: 'POST',
      paths: ['/organization_domains'],
      headers: writing(ctx),
      body: JSON.stringify({ domain: 'd{n}.bench-created.com', organization_id: '{pick}' }),
      picks: sample(WRITE_ORGS).map((n) => seededOrganizationId(WRITE_BASE + n)),
    }),
  },
];

/** One request to learn whether the endpoint exists on this branch (and answers 2xx). */
async function probe(spec: ReturnType<Scenario['build']>): Promise<string | undefined> {
  if (typeof spec === 'string') return spec;
  const body = spec.body?.replaceAll('{n}', `probe${Date.now()}`).replaceAll('{pick}', spec.picks?.[0] ?? '');
  const res = await fetch(`${baseUrl}${spec.paths[0]}`, {
    method: spec.method,
    headers: spec.headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  // A GraphQL answer is 200 with `errors` when the field is not in the schema (yet).
  if (res.ok && spec.paths[0] === '/client/graphql' && text.includes('"errors"'))
    return `GraphQL answered errors: ${text.slice(0, 200)}`;
  if (res.ok) return undefined;
  if (res.status === 404 && text.includes('route_not_found'))
    return 'endpoint not on this branch (404 route_not_found)';
  return `probe answered ${res.status}: ${text.slice(0, 200)}`;
}

// ---------------------------------------------------------------- the run

function gitCommit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root })
      .toString()
      .trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return 'unknown';
  }
}

async function runBaseline(): Promise<BenchResults['baseline']> {
  await assertPortFree(port + 1);
  const child = spawn(process.execPath, nodeArgs('bench/baseline.ts'), {
    cwd: root,
    env: { ...process.env, PORT: String(port + 1) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await waitFor(`http://127.0.0.1:${port + 1}/`, child, 30_000);
    const measured = await runLoad(
      {
        url: `http://127.0.0.1:${port + 1}`,
        method: 'GET',
        paths: ['/'],
        headers: {},
        connections,
        warmupSeconds: warmup,
        durationSeconds: duration,
      },
      child.pid,
    );
    return { ...measured.result, rssMaxMb: measured.rssMaxMb };
  } finally {
    await stop(child);
  }
}

// ---------------------------------------------------------------- floors and peer

/** A process run beside Atrium in the same rounds: a floor or the peer. */
interface Companion {
  kind: 'floor' | 'peer';
  name: string;
  url: string;
  child: ChildProcess;
  /** The Atrium scenarios it is paired with, and their targets (Atrium / it). */
  pairings: { scenario: string; target?: number }[];
  /** Its request for a paired scenario, given Atrium's (a floor answers the very same one). */
  specFor(scenario: string, atrium: RequestSpec): RequestSpec | undefined;
}

/** Waits until a child prints `listening` (the floors fetch Atrium's JWKS first, then listen). */
async function listening(child: ChildProcess, limitMs: number): Promise<void> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  try {
    for await (const line of lines) if (line.startsWith('listening')) return;
    throw new Error(`exited with ${child.exitCode} before it listened`);
  } finally {
    clearTimeout(timer);
    lines.close();
  }
}

/** Starts the floors (bench/floors/*.ts) on ports `port + 2` and up, against the bench database. */
async function startFloors(databaseUrl: string, clientId: string): Promise<Companion[]> {
  const started: Companion[] = [];
  for (const [i, floor] of FLOORS.entries()) {
    const floorPort = port + 2 + i;
    await assertPortFree(floorPort);
    // With --cpu-prof the floors are profiled too (their own folder), to compare like with like.
    const prof = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${join(tmpDir, 'profiles', 'floors')}`] : [];
    const flags = args['floor-node-options'].split(/\s+/).filter(Boolean);
    const child = spawn(process.execPath, nodeArgs(floor.script, [...flags, ...prof]), {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(floorPort),
        DATABASE_URL: databaseUrl,
        ATRIUM_URL: baseUrl,
        // Atrium's `iss` without ATRIUM_PUBLIC_URL: where it listens.
        ISSUER: baseUrl,
        CLIENT_ID: clientId,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await listening(child, 30_000);
    started.push({
      kind: 'floor',
      name: floor.name,
      url: `http://127.0.0.1:${floorPort}`,
      child,
      pairings: floor.pairings,
      specFor: (scenario, atrium) => (floor.pairings.some((p) => p.scenario === scenario) ? atrium : undefined),
    });
    log(`floor ${floor.name} listening on ${floorPort} (${floor.script})`);
  }
  return started;
}

/** Starts the peer from its checkout (`--peer`) on `port + 9` and seeds it through its API. */
async function startPeer(checkout: string, members: number): Promise<Companion> {
  const peerPort = port + 9;
  await assertPortFree(peerPort);
  const seedFile = join(tmpDir, 'peer-seed.json');
  writeFileSync(seedFile, JSON.stringify(peerSeedConfig()));
  const { command, args: peerArgs } = peerCommand(resolve(checkout), peerPort, existsSync, seedFile);
  const out = createWriteStream(join(tmpDir, 'peer.log'));
  const child = spawn(command, peerArgs, { cwd: resolve(checkout), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const spawned = await Promise.race([
    once(child, 'spawn').then(() => undefined),
    once(child, 'error').then(([error]) => error as Error),
  ]);
  if (spawned) {
    throw new Error(
      `--peer: could not run ${command} ${peerArgs.join(' ')}: ${spawned.message} ` +
        '(build the checkout with `bun install && bun run build` and run the bench on node >= 22.11, or install bun)',
    );
  }
  const url = `http://127.0.0.1:${peerPort}`;
  const t0 = performance.now();
  let seed: PeerSeed;
  try {
    await waitFor(`${url}/health`, child, 60_000);
    seed = await seedPeer(url, 1_000, members);
  } catch (error) {
    // Not yet a companion, so the run's `finally` would not stop it: stop it here.
    await stop(child);
    throw error;
  }
  log(`peer (${command} ${peerArgs.join(' ')}) seeded in ${Math.round(performance.now() - t0)} ms`);
  return {
    kind: 'peer',
    name: 'workos/emulate',
    url,
    child,
    pairings: PEER_PAIRINGS,
    specFor: (scenario) => peerSpec(scenario, seed),
  };
}

/**
 * Whether a floor answers Atrium's request with the same JSON (parsed, compared deeply; a create's
 * id and times blanked, `shapeOf`): a floor that answered less would be no floor. Null when either
 * did not answer 200 (201 to a POST).
 */
async function sameAnswer(spec: RequestSpec, floorUrl: string): Promise<{ same: boolean | null; detail?: string }> {
  const ask = async (url: string) => {
    const body = spec.body?.replaceAll('{n}', 'probe').replaceAll('{pick}', spec.picks?.[0] ?? '');
    const res = await fetch(`${url}${spec.paths[0]}`, {
      method: spec.method,
      headers: spec.headers,
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, text: await res.text() };
  };
  const [atrium, floor] = [await ask(baseUrl), await ask(floorUrl)];
  // A read answers 200 (a GraphQL POST too), a create 201; both must answer the same one.
  const ok = atrium.status;
  if ((ok !== 200 && ok !== 201) || floor.status !== ok)
    return { same: null, detail: `Atrium ${atrium.status}, floor ${floor.status}: ${floor.text.slice(0, 200)}` };
  const same = isDeepStrictEqual(shapeOf(ok, atrium.text), shapeOf(ok, floor.text));
  return same ? { same } : { same, detail: `Atrium ${atrium.text.slice(0, 300)} / floor ${floor.text.slice(0, 300)}` };
}

/** Drives one request against `url` and measures it (CPU of `pid`, PostgreSQL and the load generator). */
async function measure(
  spec: RequestSpec,
  url: string,
  pid: number | undefined,
  base: Pick<ScenarioRun, 'size' | 'organizations' | 'scenario' | 'title'>,
  note: string | undefined,
  speed: BenchResults['baseline'],
): Promise<ScenarioRun> {
  const measured = await runLoad({ ...spec, url, connections, warmupSeconds: warmup, durationSeconds: duration }, pid);
  const r = measured.result;
  const perRequest = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, r.requests));
  const cpu = measured.cpuSeconds;
  return {
    ...base,
    available: true,
    ...(note ? { note } : {}),
    rps: Math.round(r.rps),
    latency: r.latency,
    requests: r.requests,
    non2xx: r.non2xx,
    errors: r.errors,
    statusCodes: r.statusCodes,
    rssMaxMb: measured.rssMaxMb,
    serverCpuAvg: measured.cpuAvg,
    cpuUsPerRequest: cpu
      ? {
          server: perRequest(cpu.server),
          postgres: perRequest(cpu.postgres),
          load: cpu.load === null ? null : perRequest(cpu.load),
        }
      : null,
    ...(speed ? { fractionOfBaseline: Math.round((r.rps / speed.rps) * 1000) / 1000 } : {}),
  };
}

function logRun(run: ScenarioRun, round: number): void {
  const cpu = run.cpuUsPerRequest;
  log(
    `${run.size} ${run.scenario}${repeat > 1 ? ` (${round}/${repeat})` : ''}: ${run.rps} req/s, p99 ${run.latency?.p99} ms, ` +
      `non-2xx ${run.non2xx}, errors ${run.errors}, RSS max ${run.rssMaxMb} MB` +
      (cpu ? `, CPU µs/req server ${cpu.server} pg ${cpu.postgres} load ${cpu.load ?? '?'}` : ''),
  );
}

/** Creates this many organizations (one verified domain each) through the API, `lanes` at a time. */
async function createThroughApi(apiKey: string, count: number, domainOf: (n: number) => string, lanes = 32) {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) {
        const n = next++;
        const res = await fetch(`${baseUrl}/organizations`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `Stats ${n}`, domain_data: [{ domain: domainOf(n), state: 'verified' }] }),
        });
        if (res.status !== 201)
          throw new Error(`create ${n} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        await res.arrayBuffer().catch(() => {});
      }
    }),
  );
}

const STATISTICS_CREATES = 20_000;

/**
 * `--statistics-check` (issue #35): on the fresh database, before the bench seeds (and analyzes)
 * anything, 20,000 creates through the API into an environment of their own; then, waiting at
 * most two of Atrium's statistics intervals for its own ANALYZE (none is run by the bench), that
 * environment's domains filter against its first page.
 */
async function checkStatistics(
  sql: postgres.Sql,
  client: ReturnType<typeof createTRPCClient<AppRouter>>['admin'],
  pid: number | undefined,
): Promise<NonNullable<BenchResults['statisticsCheck']>> {
  const env = await client.environments.create.mutate({ name: 'bench-statistics' });
  const domainOf = (n: number) => `s${n}.bench-statistics.com`;
  const t0 = performance.now();
  await createThroughApi(env.api_key, STATISTICS_CREATES, domainOf);
  const createSeconds = (performance.now() - t0) / 1000;
  const done = new Date();
  log(`statistics check: ${STATISTICS_CREATES} creates through the API in ${createSeconds.toFixed(1)} s`);
  const interval = Number(process.env.ATRIUM_STATISTICS_CHECK_SECONDS ?? 15);
  const waitUntil = Date.now() + (2 * interval + 5) * 1000;
  let analyzedAfterSeconds: number | null = null;
  while (Date.now() < waitUntil) {
    const rows = await sql<{ relname: string; at: Date | null }[]>`
      select relname, greatest(last_analyze, last_autoanalyze) as at from pg_stat_user_tables
      where relname in ('organizations', 'organization_domains')`;
    if (rows.length === 2 && rows.every((row) => row.at !== null && row.at >= done)) {
      analyzedAfterSeconds = Math.round((Date.now() - done.getTime()) / 100) / 10;
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  log(
    analyzedAfterSeconds === null
      ? 'statistics check: Atrium did not analyze the tables within the wait'
      : `statistics check: Atrium analyzed the tables ${analyzedAfterSeconds} s after the last create`,
  );
  const auth = { Authorization: `Bearer ${env.api_key}` };
  const base = { size: STATISTICS_CREATES, organizations: STATISTICS_CREATES };
  const firstPage = await measure(
    { method: 'GET', paths: ['/organizations?limit=10'], headers: auth },
    baseUrl,
    pid,
    { ...base, scenario: 'statistics_first_page', title: 'after 20,000 creates: list first page (limit=10)' },
    undefined,
    null,
  );
  logRun(firstPage, 1);
  const filter = await measure(
    {
      method: 'GET',
      paths: sample(STATISTICS_CREATES).map((n) => `/organizations?domains=${domainOf(n - 1)}`),
      headers: auth,
    },
    baseUrl,
    pid,
    { ...base, scenario: 'statistics_domains_filter', title: 'after 20,000 creates: list with a domains filter' },
    undefined,
    null,
  );
  logRun(filter, 1);
  return {
    creates: STATISTICS_CREATES,
    createSeconds: Math.round(createSeconds * 10) / 10,
    analyzedAfterSeconds,
    firstPage,
    filter,
  };
}

async function agentToken(clientId: string): Promise<{ token: string; kind: string }> {
  if (process.env.BENCH_AGENT_TOKEN) return { token: process.env.BENCH_AGENT_TOKEN, kind: 'BENCH_AGENT_TOKEN' };
  // Without a way to mint a real one, a well-formed RS256 token from a key the server does not
  // know: the whole validation path runs (parse, key lookup, signature) and answers valid=false.
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  await exportJWK(publicKey);
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ org_id: seededOrganizationId(1) })
    .setProtectedHeader({ alg: 'RS256', kid: 'key_01HE8GSH8FQPASKSY27THRKRBP' })
    .setIssuer(baseUrl)
    .setAudience(clientId)
    .setSubject('agent_reg_01HE8GSH8FQPASKSY27THRKRBP')
    .setJti('bench')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey);
  return { token, kind: 'foreign-signed token (valid=false path); set BENCH_AGENT_TOKEN for a valid one' };
}

async function main(): Promise<void> {
  mkdirSync(tmpDir, { recursive: true });
  if (args.server !== 'start' && args.server !== 'tsx') throw new Error('--server is start or tsx');
  if (args.server === 'start' && !args.bundle) {
    // What `npm start`'s prestart does.
    const { buildServer } = (await import(pathToFileURL(join(root, 'server', 'build.mjs')).href)) as {
      buildServer: () => Promise<string>;
    };
    await buildServer();
  }
  const startedAt = new Date();
  // The code under test is the tree at start: an edit made while the run goes on is not measured.
  const commit = gitCommit();
  const dbName = `atrium_bench_${startedAt.getTime()}`;
  benchDatabase = dbName;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const benchUrl = new URL(adminUrl);
  benchUrl.pathname = `/${dbName}`;
  const [{ version } = { version: '?' }] = await admin<{ version: string }[]>`select version()`;
  await admin.unsafe(`create database ${dbName}`);
  log(`created database ${dbName}; sizes ${sizes.join(', ')}; ${duration}s per scenario after ${warmup}s warm-up`);

  const sql = postgres(benchUrl.toString(), { max: 1, onnotice: () => {} });
  let server: Started | undefined;
  const companions: Companion[] = [];
  let statisticsCheck: BenchResults['statisticsCheck'];
  let scim: ScimResults | undefined;
  const runs: ScenarioRun[] = [];
  let baseline: BenchResults['baseline'] = null;
  const speedChecks: NonNullable<BenchResults['speedChecks']> = [];
  let restartMs: number | null = null;
  let restartOrganizations: number | null = null;
  let freshMs = 0;
  let settings = { synchronousCommit: '?', fsync: '?' };
  try {
    server = await startAtrium(benchUrl.toString(), 'server.log');
    freshMs = Math.round(server.readyMs);
    log(`Atrium ready in ${freshMs} ms on a fresh database (migrations applied at start)`);

    const [sync] = await sql<{ setting: string }[]>`select setting from pg_settings where name = 'synchronous_commit'`;
    const [fsync] = await sql<{ setting: string }[]>`select setting from pg_settings where name = 'fsync'`;
    settings = { synchronousCommit: sync?.setting ?? '?', fsync: fsync?.setting ?? '?' };
    if (settings.synchronousCommit === 'off')
      throw new Error('synchronous_commit is off: commits would not be durable');

    const client = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${baseUrl}/trpc`, headers: () => ({ Authorization: `Bearer ${ADMIN_TOKEN}` }) })],
    }).admin;
    const env = await client.environments.create.mutate({ name: 'bench' });
    const writeEnv = await client.environments.create.mutate({ name: 'bench-writes' });
    const sharedEnv = await client.environments.create.mutate({ name: 'bench-shared-domains' });
    const token = await agentToken(env.client_id);

    if (args['statistics-check']) statisticsCheck = await checkStatistics(sql, client, server.child.pid);
    const exec: Exec = (text, params) => sql.unsafe(text, params as never[]);
    await installSeedHelpers(exec);
    await seedOrganizations(exec, writeEnv.environment_id, WRITE_BASE, WRITE_BASE + WRITE_ORGS);
    let seeded = 0;
    let group: GroupSeed | undefined;
    let groupReason: string | undefined;
    if (!args['skip-floors']) companions.push(...(await startFloors(benchUrl.toString(), env.client_id)));
    if (args.peer) companions.push(await startPeer(args.peer, 1_000));
    if (!args['skip-baseline']) {
      log('baseline: bare node:http, fixed 300-byte JSON');
      baseline = await runBaseline();
      log(`baseline: ${Math.round(baseline?.rps ?? 0)} req/s, p99 ${baseline?.latency.p99} ms`);
    }

    for (const size of organizationScenarios ? sizes : []) {
      const t0 = performance.now();
      await seedOrganizations(exec, env.environment_id, seeded, size);
      if (!only || only.has('list_domains_shared')) {
        await seedOrganizations(exec, sharedEnv.environment_id, SHARED_BASE + seeded, SHARED_BASE + size, true);
      }
      seeded = size;
      if (!group && !groupReason) {
        const seededGroup = await seedGroup(exec, env.environment_id, 1_000);
        if (seededGroup.ok) group = seededGroup.seed;
        else groupReason = seededGroup.reason;
      }
      // Every table the seed wrote (the group's users, memberships and roles too): a round right
      // after seeding otherwise paid about twice the PostgreSQL CPU of the next (bench/README.md).
      await sql`vacuum analyze`;
      // Write the seeded pages out now: otherwise the checkpointer spreads it over the next
      // minutes (checkpoint_completion_target), on the cores the measured scenarios share.
      await sql`checkpoint`.catch((error: unknown) => log(`checkpoint after seeding refused: ${String(error)}`));
      // And have the kernel write back the dirty pages now rather than during the next scenarios.
      execFileSync('sync');
      const [{ count } = { count: 0 }] = await sql<{ count: number }[]>`
        select count(*)::int as count from organizations where environment_id = ${env.environment_id}`;
      log(
        `seeded ${size} organizations (+1 domain each; as many again sharing domains when list_domains_shared runs) in ` +
          `${Math.round(performance.now() - t0)} ms; ${count} in table`,
      );

      const ctx: BenchContext = {
        size,
        apiKey: env.api_key,
        writeApiKey: writeEnv.api_key,
        sharedApiKey: sharedEnv.api_key,
        clientId: env.client_id,
        group,
        groupReason,
        agentToken: token.token,
        agentTokenKind: token.kind,
        widgetToken: undefined,
        widgetReason: undefined,
      };
      // With --repeat, the whole list runs again (reads before writes each round), so that the
      // scenarios compared with each other are measured alternately, not minutes apart.
      const measuredRuns = new Map<string, ScenarioRun[]>();
      for (let round = 1; round <= repeat; round++) {
        // The machine's speed now: the first round of the first size has the baseline just run.
        let speed = baseline;
        if (baseline && speedChecks.length > 0) {
          speed = await runBaseline();
          log(`speed check: baseline ${Math.round(speed?.rps ?? 0)} req/s, p99 ${speed?.latency.p99} ms`);
        }
        if (speed) speedChecks.push({ size, round, rps: Math.round(speed.rps), p99: speed.latency.p99 });
        if (!only || [...only].some((name) => /^(widgets_|graphql_)/.test(name))) await mintWidgetToken(ctx);
        for (const scenario of SCENARIOS) {
          if (only && !only.has(scenario.name)) continue;
          if (round > 1 && !measuredRuns.has(scenario.name)) continue;
          const spec = scenario.build(ctx);
          const note = scenario.note?.(ctx);
          const base = { size, organizations: count, scenario: scenario.name, title: scenario.title };
          const reason = await probe(spec);
          if (reason !== undefined || typeof spec === 'string') {
            log(`${size} ${scenario.name}: not available (${reason})`);
            runs.push({ ...base, available: false, reason: reason ?? 'not available', ...(note ? { note } : {}) });
            continue;
          }
          const run = await measure(spec, baseUrl, server.child.pid, base, note, speed);
          measuredRuns.set(scenario.name, [...(measuredRuns.get(scenario.name) ?? []), run]);
          logRun(run, round);
          // The floors and the peer paired with this scenario, right after it, in the same round.
          for (const companion of companions) {
            const pairing = companion.pairings.find((p) => p.scenario === scenario.name);
            const companionSpec = pairing && companion.specFor(scenario.name, spec);
            if (!pairing || !companionSpec) continue;
            const name = `${scenario.name}@${companion.kind}`;
            let answer: { same: boolean | null; detail?: string } = { same: null };
            if (companion.kind === 'floor') {
              answer = await sameAnswer(spec, companion.url);
              if (answer.same !== true) log(`${size} ${name}: the floor's answer is not Atrium's: ${answer.detail}`);
            }
            const companionRun = await measure(
              companionSpec,
              companion.url,
              companion.child.pid,
              {
                ...base,
                scenario: name,
                title: `${companion.kind} ${companion.name}: ${scenario.title}`,
              },
              undefined,
              speed,
            );
            companionRun.companion = {
              kind: companion.kind,
              name: companion.name,
              of: scenario.name,
              ...(pairing.target !== undefined ? { target: pairing.target } : {}),
              ...(companion.kind === 'floor' ? { sameAnswer: answer.same } : {}),
            };
            measuredRuns.set(name, [...(measuredRuns.get(name) ?? []), companionRun]);
            logRun(companionRun, round);
          }
        }
      }
      // One result per scenario: the run with the median throughput, with every run listed.
      for (const measured of measuredRuns.values()) {
        const byRps = [...measured].sort((a, b) => (a.rps ?? 0) - (b.rps ?? 0));
        const median = byRps[Math.floor((byRps.length - 1) / 2)] as ScenarioRun;
        runs.push(
          repeat > 1
            ? {
                ...median,
                repeats: measured.map((m) => ({
                  rps: m.rps ?? 0,
                  p99: m.latency?.p99 ?? 0,
                  cpuUsPerRequest: m.cpuUsPerRequest,
                  rssMaxMb: m.rssMaxMb,
                  ...(m.fractionOfBaseline !== undefined ? { fractionOfBaseline: m.fractionOfBaseline } : {}),
                })),
              }
            : median,
        );
      }
    }

    if (scimScenarios.size > 0) {
      const pid = server.child.pid;
      scim = await runScimBench({
        exec,
        baseUrl,
        root,
        tmpDir,
        serverPid: pid,
        scenarios: scimScenarios,
        newEnvironment: (name) => client.environments.create.mutate({ name }),
        measure: async (spec, base) => {
          const run = await measure(spec, baseUrl, pid, base, undefined, baseline);
          logRun(run, 1);
          return run;
        },
        cpuWindow: (loadPid, serverPid) => new CpuSplit(serverPid ?? pid, loadPid),
        // The SCIM create floor on `port + 5` (the other floors take + 2 to + 4, the peer + 9).
        floor: args['skip-floors'] ? undefined : { databaseUrl: benchUrl.toString(), port: port + 5 },
        readerSeconds: duration,
        syncUsers: Number(args['scim-users']),
        syncConcurrency: Number(args['scim-concurrency']),
        log,
      });
    }

    // Start-to-ready again on the largest table (migrations already applied).
    await stop(server.child);
    server = await startAtrium(benchUrl.toString(), 'server-restart.log');
    restartMs = Math.round(server.readyMs);
    restartOrganizations = seeded;
    log(`Atrium restarted and ready in ${restartMs} ms with ${seeded} seeded organizations`);
  } finally {
    for (const companion of companions) await stop(companion.child);
    if (server) await stop(server.child);
    await sql.end({ timeout: 5 });
    if (!args['keep-db']) await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end({ timeout: 5 });
    pidusage.clear();
  }

  const finishedAt = new Date();
  const results: BenchResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    commit,
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '?',
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      postgres: version,
    },
    settings: {
      server: args.bundle ? `start ${args.bundle}` : (args.server ?? 'start'),
      connections,
      durationSeconds: duration,
      warmupSeconds: warmup,
      repeat,
      sizes,
      ...settings,
    },
    startup: { freshMs, restartMs, restartOrganizations },
    baseline,
    ...(speedChecks.length > 0 ? { speedChecks } : {}),
    runs,
    ...(statisticsCheck ? { statisticsCheck } : {}),
    ...(scim ? { scim } : {}),
  };
  const stamp =
    args.out ??
    startedAt
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, stamp);
  writeFileSync(`${file}.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${file}.md`, renderMarkdown(results));
  writeFileSync(`${file}.svg`, renderSvg(results));
  log(`wrote ${file}.json, .md and .svg`);
}

await main();
