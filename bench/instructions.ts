/**
 * `npx tsx bench/instructions.ts`: the server's instructions per request, counted by valgrind's
 * callgrind, for a fixed number of requests sent one at a time. Unlike req/s or CPU seconds, an
 * instruction count does not move with the neighbours' load, so a change of a few per cent of
 * the server's work is visible on a loaded machine (bench/README.md, "Instructions per request").
 *
 * 1. A fresh PostgreSQL database; Atrium (`server/dist/main.mjs`, built as `npm start` builds
 *    it, with the `start` script's node flags) migrates it, gets an environment, 1,000
 *    organizations and a first organization of 1,000 members (bench/seed.ts), a widget token of
 *    member 1 and a console session; then it stops.
 * 2. Atrium again, under `valgrind --tool=callgrind --instr-atstart=no` (start-up runs
 *    uninstrumented). Per scenario: instrumentation on, `--warmup` requests, counters zeroed,
 *    `--requests` requests, counters dumped; the dump's total (`Ir`) over the requests is the figure.
 *
 * Counted: every thread of the server process (V8's compiler and GC threads included), not
 * PostgreSQL. The requests go one at a time, so PostgreSQL's pipelining of concurrent requests
 * is not exercised here (`npm run bench` measures that).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { type Exec, installSeedHelpers, seededOrganizationId, seededUserId, seedGroup, seedOrganizations } from './seed.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '300' },
    port: { type: 'string', default: '19580' },
    scenarios: { type: 'string', default: 'members,graphql,console' },
    'pg-url': { type: 'string' },
    'node-options': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    /** Another bundle than `npm start`'s (a build of another commit, kept beside it in server/dist). */
    script: { type: 'string' },
  },
});
const requests = Number(args.requests);
const warmup = Number(args.warmup);
const port = Number(args.port);
const baseUrl = `http://127.0.0.1:${port}`;
const adminUrl = args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_TOKEN = `atrium_admin_${randomBytes(20).toString("hex")}`;
const MASTER_KEY = randomBytes(32).toString('base64');
const outDir = join(root, 'bench', 'results', 'tmp', `instructions-${process.pid}`);
const log = (line: string) => console.log(`[instructions ${new Date().toISOString().slice(11, 19)}] ${line}`);

function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const parts = pkg.scripts.start.trim().split(/\s+/);
  const extra = args['node-options'] ? args['node-options'].split(/\s+/).filter(Boolean) : [];
  return [...parts.slice(1, -1), ...extra, resolve(root, args.script ?? (parts.at(-1) as string))];
}

function start(databaseUrl: string, valgrind: boolean): ChildProcess {
  const node = startCommand();
  const [command, argv] = valgrind
    ? [
        'valgrind',
        [
          '--tool=callgrind',
          '--instr-atstart=no',
          `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
          process.execPath,
          ...node,
        ],
      ]
    : [process.execPath, node];
  const child = spawn(command, argv as string[], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      ATRIUM_MASTER_KEY: MASTER_KEY,
      RATE_LIMIT_REQUESTS: '1000000000',
      RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS: '1000000000',
      RATE_LIMIT_STORE: 'postgres',
      ATRIUM_PROCESSES: '1',
      ATRIUM_DATA_DIR: join(outDir, 'data'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return child;
}

async function ready(child: ChildProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Atrium exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('Atrium was not ready in time');
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

async function send(request: Request): Promise<void> {
  const res = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${request.method} ${request.path} answered ${res.status}: ${text.slice(0, 200)}`);
}

async function admin<T>(path: string, input: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}/trpc/${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { result: { data: T } };
  return body.result.data;
}

/** Migrates and seeds with an uninstrumented server; the requests each scenario sends. */
async function prepare(databaseUrl: string): Promise<Record<string, Request>> {
  const server = start(databaseUrl, false);
  try {
    await ready(server, 60_000);
    const env = await admin<{ environment_id: string; api_key: string }>('admin.environments.create', {
      name: 'instructions',
    });
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const exec: Exec = (text, params) => sql.unsafe(text, params as never[]);
    await installSeedHelpers(exec);
    await seedOrganizations(exec, env.environment_id, 0, 1_000);
    const group = await seedGroup(exec, env.environment_id, 1_000);
    if (!group.ok) throw new Error(group.reason);
    await sql`vacuum analyze`;
    await sql.end();
    const minted = await fetch(`${baseUrl}/widgets/token`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.api_key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        organization_id: seededOrganizationId(1),
        user_id: seededUserId(1),
        scopes: ['widgets:users-table:manage'],
      }),
    });
    const { token } = (await minted.json()) as { token: string };
    const signIn = await fetch(`${baseUrl}/console/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: baseUrl },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
    const widget = {
      Authorization: `Bearer ${token}`,
      'WorkOS-Widgets-Version': '1',
      'WorkOS-Widgets-Type': 'user-management',
      'Content-Type': 'application/json',
    };
    return {
      members: { method: 'GET', path: '/_widgets/UserManagement/members', headers: widget },
      graphql: {
        method: 'POST',
        path: '/client/graphql',
        headers: { ...widget, Accept: 'application/graphql-response+json, application/json' },
        body: JSON.stringify({
          query: 'query Organization($id: ID!) { organization(id: $id) { id name } }',
          variables: { id: seededOrganizationId(1) },
        }),
      },
      console: {
        method: 'GET',
        path: '/trpc/admin.environments.list',
        headers: { Cookie: cookie, 'x-csrf-token': csrf },
      },
    };
  } finally {
    await stop(server);
  }
}

function control(pid: number, ...flags: string[]): void {
  execFileSync('callgrind_control', [...flags, String(pid)], { stdio: 'ignore' });
}

/** The `Ir` total of dump number `n` of the process (callgrind writes `<file>.<n>`), once written. */
async function dumpTotal(pid: number, n: number): Promise<number> {
  const file = join(outDir, `callgrind.out.${pid}.${n}`);
  for (let i = 0; i < 600; i++) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const total = /^totals: (\d+)/m.exec(text)?.[1];
    if (total) return Number(total);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no total in ${file}; the directory holds ${readdirSync(outDir).join(', ')}`);
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  if (!args['no-build'] && !args.script) {
    const { buildServer } = (await import(pathToFileURL(join(root, 'server', 'build.mjs')).href)) as {
      buildServer: () => Promise<string>;
    };
    await buildServer();
  }
  const dbName = `atrium_instructions_${Date.now()}`;
  const pg = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await pg.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  let server: ChildProcess | undefined;
  try {
    const scenarios = await prepare(url.toString());
    log('seeded; starting Atrium under callgrind');
    server = start(url.toString(), true);
    await ready(server, 600_000);
    const pid = server.pid as number;
    control(pid, '-i', 'on');
    let dumps = 0;
    for (const name of (args.scenarios ?? '').split(',')) {
      const request = scenarios[name];
      if (!request) throw new Error(`unknown scenario ${name}`);
      for (let i = 0; i < warmup; i++) await send(request);
      control(pid, '-z');
      for (let i = 0; i < requests; i++) await send(request);
      control(pid, '-d', name);
      const total = await dumpTotal(pid, ++dumps);
      log(`${name}: ${Math.round(total / requests).toLocaleString('en')} instructions per request (${requests} requests after ${warmup})`);
    }
  } finally {
    if (server) await stop(server);
    await pg.unsafe(`drop database if exists ${dbName} with (force)`);
    await pg.end();
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
