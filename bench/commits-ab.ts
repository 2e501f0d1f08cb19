/**
 * `npx tsx bench/commits-ab.ts --variant old=/work/wt/old --variant main=/work/main[,--node-flag…] ...`: server CPU per
 * request of checkouts of *different commits*, interleaved block after block (as cpu-ab.ts does
 * for builds of one schema). Each variant is a checkout with its own node_modules and its
 * `npm start` bundle built (`node server/build.mjs` there); it runs from that checkout, so it
 * migrates its own fresh database with its own migrations. Everything it needs is made through
 * the public API, which every commit serves alike: an environment (admin tRPC), 1,000 organizations
 * with a verified domain each, 100 members of the first, a widget token of its admin. Then, per round, per
 * scenario, per variant in turn: `--requests` requests, `--concurrency` in flight, and the
 * server's utime + stime from /proc (the first round warms up and is not counted). The question it
 * answers: is some scenario slower on one commit than on another (issue #35, "no scenario slower
 * than on today's main by more than 5 %"), with the machine's drift shared by both.
 * `--server-output dir` keeps each server's stdout (`--variant a=…,--trace-gc-nvp`, then
 * `npx tsx bench/gc-summary.ts dir/a.txt`: how much of what it allocates is promoted).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import {
  abOptions,
  abServerEnv,
  abSettings,
  cpuTicks,
  graphqlOrganizationRequest,
  median,
  serverOutput,
  startArgs,
} from './ab-stats.ts';

const { values: args } = parseArgs({
  options: {
    ...abOptions({ requests: '4000', warmup: '3000', rounds: '5', concurrency: '32', port: '19680' }),
    scenarios: { type: 'string', default: 'rest,trpc,filter,members,graphql,create,jwks' },
  },
});
const settings = abSettings(args);
const { requests, warmup, rounds, concurrency, adminUrl } = settings;
/** Organizations made per variant (each with a verified domain), and members of the first one. */
const ORGANIZATIONS = 1_000;
const MEMBERS = 100;
const log = (line: string) => console.log(`[commits-ab ${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Variant {
  name: string;
  checkout: string;
  /** Node flags after the start script's (`name=checkout,--cpu-prof,--cpu-prof-dir=…`). */
  flags: string[];
  port: number;
  database: string;
  server?: ChildProcess;
  scenarios?: Record<string, Request>;
}

function start(variant: Variant, databaseUrl: string): ChildProcess {
  const dataDir = join(variant.checkout, 'bench', 'results', 'tmp', `commits-ab-${process.pid}`);
  mkdirSync(dataDir, { recursive: true });
  return spawn(process.execPath, startArgs(variant.checkout, variant.flags), {
    cwd: variant.checkout,
    env: abServerEnv(settings, { databaseUrl, port: variant.port, dataDir: join(dataDir, String(variant.port)) }),
    // `--server-output dir`: each server's stdout to dir/<variant>.txt (`--trace-gc-nvp`'s lines, for bench/gc-summary.ts).
    stdio: ['ignore', serverOutput(args['server-output'], variant.name), 'inherit'],
  });
}

/** A process's peak resident set in MB (`VmHWM` of /proc/<pid>/status). */
function peakRssMb(pid: number): string {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB$/m);
  return line ? (Number(line[1]) / 1024).toFixed(1) : '?';
}

async function ready(variant: Variant): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (variant.server?.exitCode !== null) throw new Error(`${variant.name} exited`);
    try {
      if ((await fetch(`http://127.0.0.1:${variant.port}/readyz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${variant.name} was not ready in time`);
}

async function call(variant: Variant, request: Request): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${variant.port}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status: res.status, text: await res.text() };
}

async function must<T>(variant: Variant, request: Request): Promise<T> {
  const { status, text } = await call(variant, request);
  if (status >= 300)
    throw new Error(`${variant.name}: ${request.method} ${request.path} answered ${status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** The environment through the admin tRPC procedure, named as the commit names it. */
async function createEnvironment(variant: Variant): Promise<{ api_key: string; client_id: string }> {
  for (const path of ['admin.environments.create', 'environments.create']) {
    const { status, text } = await call(variant, {
      method: 'POST',
      path: `/trpc/${path}`,
      headers: { Authorization: `Bearer ${settings.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `commits-ab-${variant.name}` }),
    });
    if (status === 200)
      return (JSON.parse(text) as { result: { data: { api_key: string; client_id: string } } }).result.data;
  }
  throw new Error(`${variant.name}: no admin procedure made an environment`);
}

/** What each scenario sends, made through the public API of this variant. */
async function prepare(variant: Variant): Promise<Record<string, Request>> {
  const { api_key: apiKey, client_id: clientId } = await createEnvironment(variant);
  const api = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
  // `npm run bench`'s scale at its smallest size: 1,000 organizations, made 16 at a time.
  const organizations: string[] = [];
  for (let i = 0; i < ORGANIZATIONS; i += 16) {
    const made = await Promise.all(
      Array.from({ length: Math.min(16, ORGANIZATIONS - i) }, (_, k) =>
        must<{ id: string }>(variant, {
          method: 'POST',
          path: '/organizations',
          headers: api,
          body: JSON.stringify({
            name: `Commits AB ${i + k}`,
            domain_data: [{ domain: `commits-ab-${i + k}.com`, state: 'verified' }],
          }),
        }),
      ),
    );
    organizations.push(...made.map((org) => org.id));
  }
  const org = organizations[0] as string;
  // The first organization's members: the widget's member first, then MEMBERS - 1 more.
  const users: string[] = [];
  for (let i = 0; i < MEMBERS; i += 16) {
    const made = await Promise.all(
      Array.from({ length: Math.min(16, MEMBERS - i) }, async (_, k) => {
        const user = await must<{ id: string }>(variant, {
          method: 'POST',
          path: '/user_management/users',
          headers: api,
          body: JSON.stringify({
            email: `member${i + k}@commits-ab-0.com`,
            first_name: 'Bench',
            last_name: `Member ${i + k}`,
          }),
        });
        await must(variant, {
          method: 'POST',
          path: '/user_management/organization_memberships',
          headers: api,
          body: JSON.stringify({ organization_id: org, user_id: user.id, role_slug: i + k === 0 ? 'admin' : 'member' }),
        });
        return user.id;
      }),
    );
    users.push(...made);
  }
  const user = { id: users[0] as string };
  const { token } = await must<{ token: string }>(variant, {
    method: 'POST',
    path: '/widgets/token',
    headers: api,
    body: JSON.stringify({ organization_id: org, user_id: user.id, scopes: ['widgets:users-table:manage'] }),
  });
  const widget = {
    Authorization: `Bearer ${token}`,
    'WorkOS-Widgets-Version': '1',
    'WorkOS-Widgets-Type': 'user-management',
    'Content-Type': 'application/json',
  };
  const bearer = { Authorization: `Bearer ${apiKey}` };
  return {
    rest: { method: 'GET', path: `/organizations/${organizations[700]}`, headers: bearer },
    trpc: {
      method: 'GET',
      path: `/trpc/organizations.get?input=${encodeURIComponent(JSON.stringify({ id: organizations[700] }))}`,
      headers: bearer,
    },
    list: { method: 'GET', path: '/organizations?limit=10', headers: bearer },
    filter: { method: 'GET', path: '/organizations?domains=commits-ab-700.com', headers: bearer },
    page: { method: 'GET', path: '/organizations?limit=100', headers: bearer },
    memberships: {
      method: 'GET',
      path: `/user_management/organization_memberships?organization_id=${org}&limit=10`,
      headers: bearer,
    },
    widgetOrgs: { method: 'GET', path: '/_widgets/UserManagement/organizations', headers: widget },
    members: { method: 'GET', path: '/_widgets/UserManagement/members', headers: widget },
    graphql: graphqlOrganizationRequest(widget, org),
    create: {
      method: 'POST',
      path: '/organizations',
      headers: api,
      body: JSON.stringify({ name: 'Commits AB created', metadata: { source: 'bench' } }),
    },
    jwks: { method: 'GET', path: `/sso/jwks/${clientId}`, headers: {} },
  };
}

/**
 * PostgreSQL's CPU ticks for one variant: its database's backends (process title `postgres: …
 * <database> <client>`) and the server's own processes (WAL writer, checkpointer: no client), as
 * bench/run.ts counts them.
 */
function postgresTicks(database: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const backend = /\(\d+\)|\[local\]/.test(title);
      if (backend && !title.includes(` ${database} `)) continue;
      total += cpuTicks(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

async function sendMany(variant: Variant, request: Request, n: number): Promise<void> {
  let left = n;
  const loop = async () => {
    while (left > 0) {
      left -= 1;
      const { status, text } = await call(variant, request);
      if (status !== 200 && status !== 201)
        throw new Error(`${variant.name}: ${request.method} ${request.path} answered ${status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, loop));
}

async function main(): Promise<void> {
  const pg = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const variants: Variant[] = (args.variant ?? []).map((spec, i) => {
    const at = spec.indexOf('=');
    const [checkout, ...flags] = spec.slice(at + 1).split(',');
    return {
      name: spec.slice(0, at),
      checkout: resolve(checkout as string),
      flags,
      port: Number(args.port) + i,
      database: `atrium_commits_ab_${Date.now()}_${i}`,
    };
  });
  try {
    for (const variant of variants) {
      await pg.unsafe(`create database ${variant.database}`);
      const url = new URL(adminUrl);
      url.pathname = `/${variant.database}`;
      variant.server = start(variant, url.toString());
      await ready(variant);
      variant.scenarios = await prepare(variant);
      log(`${variant.name} (${variant.checkout}) ready on ${variant.port}`);
    }
    const names = (args.scenarios ?? '').split(',');
    const figures = new Map<string, number[]>();
    for (let round = 0; round <= rounds; round++) {
      for (const name of names) {
        for (const variant of variants) {
          const request = variant.scenarios?.[name];
          if (!request) throw new Error(`unknown scenario ${name}`);
          const pid = variant.server?.pid as number;
          const n = round === 0 ? warmup : requests;
          const before = cpuTicks(pid);
          const pgBefore = postgresTicks(variant.database);
          await sendMany(variant, request, n);
          const micros = ((cpuTicks(pid) - before) * 10_000) / n;
          const pgMicros = ((postgresTicks(variant.database) - pgBefore) * 10_000) / n;
          if (round === 0) continue;
          const key = `${name} ${variant.name}`;
          figures.set(key, [...(figures.get(key) ?? []), micros]);
          figures.set(`${key} pg`, [...(figures.get(`${key} pg`) ?? []), pgMicros]);
        }
      }
      if (round > 0)
        log(
          `round ${round}/${rounds} done; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
        );
    }
    for (const name of names) {
      const base = median(figures.get(`${name} ${variants[0]?.name}`) ?? []);
      const pgBase = median(figures.get(`${name} ${variants[0]?.name} pg`) ?? []);
      for (const variant of variants) {
        const values = figures.get(`${name} ${variant.name}`) ?? [];
        const pg = figures.get(`${name} ${variant.name} pg`) ?? [];
        const both = median(values) + median(pg);
        log(
          `${name.padEnd(8)} ${variant.name.padEnd(10)} server ${Math.round(median(values))} us/req (${(median(values) / base).toFixed(2)}x), rounds ${values.map(Math.round).join(', ')}; PostgreSQL ${Math.round(median(pg))} (rounds ${pg.map(Math.round).join(', ')}); both ${(both / (base + pgBase)).toFixed(2)}x ${variants[0]?.name}`,
        );
      }
    }
    // Each server's peak resident set over the whole run (VmHWM): what a node flag buys in CPU, it may cost here.
    for (const variant of variants)
      log(`${variant.name.padEnd(10)} peak RSS ${peakRssMb(variant.server?.pid as number)} MB`);
  } finally {
    for (const variant of variants) {
      if (variant.server && variant.server.exitCode === null) {
        variant.server.kill('SIGTERM');
        await once(variant.server, 'exit');
      }
      await pg.unsafe(`drop database if exists ${variant.database} with (force)`);
      rmSync(join(variant.checkout, 'bench', 'results', 'tmp', `commits-ab-${process.pid}`), {
        recursive: true,
        force: true,
      });
    }
    await pg.end();
  }
}

await main();
