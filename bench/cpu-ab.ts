/**
 * `npx tsx bench/cpu-ab.ts --variant a=server/dist/a.mjs --variant b=server/dist/b.mjs`: the
 * server's CPU time per request of several builds (or node flags) at once, interleaved, for a
 * fixed number of requests sent one at a time (or `--concurrency n` at once). On a machine that others load, throughput and
 * even one run's CPU per request move with the neighbours; builds measured side by side, block
 * after block, see the same neighbours, so their difference holds (bench/README.md, "CPU per
 * request, A/B").
 *
 * 1. A fresh PostgreSQL database; Atrium (`npm start`'s bundle and node flags) migrates it, gets an
 *    environment, 1,000 organizations and a first organization of 1,000 members (bench/seed.ts),
 *    a widget token of member 1 and a console session; then it stops.
 * 2. Each variant starts on its own port over that database (same admin token and master key).
 *    Per round, per scenario, per variant in turn: `--requests` requests one at a time (`--concurrency`), and the
 *    server's utime + stime from /proc before and after. The first round (`--warmup` requests
 *    each) warms the JIT and is not counted; the median of the other rounds is reported.
 *
 * Counted: the server process (every thread: V8's compiler and GC threads included), not
 * PostgreSQL. One request at a time, so PostgreSQL's pipelining is not exercised (`npm run bench`).
 * A variant is `name=bundle` (a build of some commit kept in server/dist, `node server/build.mjs
 * server/dist/x.mjs`) with optional node flags after a comma: `semi16=server/dist/x.mjs,--max-semi-space-size=16`.
 * A floor is a variant too (`name=floor:graphql`, `floor:members` or `floor:rest`, flags after a comma as above):
 * bench/floors/<name>.ts over the same database and token, measured only in the scenarios it serves,
 * so Atrium and its floor are measured side by side, block after block (bench/README.md, "GraphQL
 * organization against its floor, interleaved").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import {
  type Exec,
  installSeedHelpers,
  seededOrganizationId,
  seededUserId,
  seedGroup,
  seedOrganizations,
} from './seed.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    // Requests in flight at once (each of that many loops sends one at a time): at 1 the server
    // pays a wake-up per request; under load it batches, and costs per request differ.
    ...abOptions({ requests: '500', warmup: '1000', rounds: '5', concurrency: '1', port: '19580' }),
    scenarios: { type: 'string', default: 'members,graphql,rest,console' }, // or create, memberships
  },
});
const settings = abSettings(args);
const { requests, warmup, rounds, concurrency, firstPort, adminUrl } = settings;
let port = firstPort;
let baseUrl = `http://127.0.0.1:${port}`;
const useVariant = (i: number) => {
  port = firstPort + i;
  baseUrl = `http://127.0.0.1:${port}`;
};
const outDir = join(root, 'bench', 'results', 'tmp', `cpu-ab-${process.pid}`);
const log = (line: string) => console.log(`[cpu-ab ${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Variant {
  name: string;
  script: string;
  flags: string[];
  /** Settings for an Atrium variant (`NAME=value` items after the bundle), over the ones below. */
  env: Record<string, string>;
  /** A floor (bench/floors/<floor>.ts), run through tsx as `npm run bench` runs it, instead of a bundle. */
  floor?: string;
}

/** The scenarios each floor serves (bench/floors/*.ts). */
const FLOOR_SCENARIOS: Record<string, string[]> = {
  graphql: ['graphql'],
  'graphql-hardened': ['graphql'],
  members: ['members'],
  rest: ['rest', 'memberships', 'create'],
};

/**
 * `name=bundle[,flag...]`; the bundle defaults to `npm start`'s, the flags add to its node flags.
 * `name=floor:<floor>[,flag...]`: a floor, with only the given node flags. `NAME=value` items
 * among the flags are settings of an Atrium variant (`base=server/dist/x.mjs,LOG_LEVEL=info`).
 */
function variantOf(spec: string): Variant {
  const at = spec.indexOf('=');
  // A bare `floor:<floor>` is that floor, named so.
  const [name, rest] = at < 0 ? [spec, spec.startsWith('floor:') ? spec : ''] : [spec.slice(0, at), spec.slice(at + 1)];
  const [script = '', ...items] = rest.split(',');
  const setting = /^([A-Z][A-Z0-9_]*)=(.*)$/;
  const flags: string[] = [];
  const env: Record<string, string> = {};
  for (const item of items) {
    const pair = setting.exec(item);
    if (pair) env[pair[1] as string] = pair[2] as string;
    else flags.push(item);
  }
  if (!script.startsWith('floor:')) return { name, script, flags, env };
  const floor = script.slice('floor:'.length);
  if (!FLOOR_SCENARIOS[floor]) throw new Error(`unknown floor ${floor}`);
  return { name, script: join('bench', 'floors', `${floor}.ts`), flags, env, floor };
}

/** A floor over the bench database: its token's issuer is the first variant's URL, whose JWKS it reads at start. */
function startFloor(databaseUrl: string, variant: Variant, clientId: string): ChildProcess {
  const issuer = `http://127.0.0.1:${firstPort}`;
  return spawn(process.execPath, [...variant.flags, '--import', 'tsx', resolve(root, variant.script)], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      ATRIUM_URL: issuer,
      ISSUER: issuer,
      CLIENT_ID: clientId,
    },
    stdio: ['ignore', serverOutput(args['server-output'], variant.name), 'inherit'],
  });
}

/** Is the floor up? It answers 404 to any GET. */
async function floorReady(child: ChildProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the floor exited with ${child.exitCode}`);
    try {
      await fetch(`${baseUrl}/`);
      return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the floor was not ready in time');
}

function start(databaseUrl: string, variant: Variant): ChildProcess {
  const child = spawn(process.execPath, startArgs(root, variant.flags, variant.script), {
    cwd: root,
    env: {
      // One issuer for every variant's port, so the widget token minted once verifies on all.
      ...abServerEnv(settings, {
        databaseUrl,
        port,
        publicUrl: `http://127.0.0.1:${firstPort}`,
        dataDir: join(outDir, `data-${port}`),
      }),
      ...variant.env,
    },
    stdio: ['ignore', serverOutput(args['server-output'], variant.name), 'inherit'],
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
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`${request.method} ${request.path} answered ${res.status}: ${text.slice(0, 200)}`);
}

/** `n` requests, `concurrency` in flight at a time. */
async function sendMany(request: Request, n: number): Promise<void> {
  let left = n;
  const loop = async () => {
    while (left > 0) {
      left -= 1;
      await send(request);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, loop));
}

async function admin<T>(path: string, input: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}/trpc/${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${settings.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { result: { data: T } };
  return body.result.data;
}

/** Migrates and seeds with an uninstrumented server; the requests each scenario sends, and the environment's client id. */
async function prepare(
  databaseUrl: string,
  variant: Variant,
): Promise<{ scenarios: Record<string, Request>; clientId: string }> {
  const server = start(databaseUrl, variant);
  try {
    await ready(server, 60_000);
    const env = await admin<{ environment_id: string; api_key: string; client_id: string }>(
      'admin.environments.create',
      {
        name: 'instructions',
      },
    );
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
      body: JSON.stringify({ token: settings.adminToken }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
    const widget = {
      Authorization: `Bearer ${token}`,
      'WorkOS-Widgets-Version': '1',
      'WorkOS-Widgets-Type': 'user-management',
      'Content-Type': 'application/json',
    };
    const scenarios: Record<string, Request> = {
      members: { method: 'GET', path: '/_widgets/UserManagement/members', headers: widget },
      graphql: graphqlOrganizationRequest(widget, seededOrganizationId(1)),
      // REST `GET /organizations/:id` with the environment's API key (issue #35's GET by id).
      rest: {
        method: 'GET',
        path: `/organizations/${seededOrganizationId(1)}`,
        headers: { Authorization: `Bearer ${env.api_key}` },
      },
      console: {
        method: 'GET',
        path: '/trpc/admin.environments.list',
        headers: { Cookie: cookie, 'x-csrf-token': csrf },
      },
      // `npm run bench`'s create_organization: a durable create without domain data (issue #35).
      create: {
        method: 'POST',
        path: '/organizations',
        headers: { Authorization: `Bearer ${env.api_key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'CPU A/B created', metadata: { source: 'bench' } }),
      },
      // `npm run bench`'s list_memberships: the first page of the seeded organization's 1,000 memberships.
      memberships: {
        method: 'GET',
        path: `/user_management/organization_memberships?organization_id=${group.seed.organizationId}&limit=10`,
        headers: { Authorization: `Bearer ${env.api_key}` },
      },
    };
    return { scenarios, clientId: env.client_id };
  } finally {
    await stop(server);
  }
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const variants = (args.variant ?? ['main=']).map(variantOf);
  const dbName = `atrium_cpu_ab_${Date.now()}`;
  const pg = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await pg.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const servers: ChildProcess[] = [];
  try {
    useVariant(0);
    if (variants[0]?.floor) throw new Error('the first variant must be an Atrium build (the floors read its JWKS)');
    const { scenarios, clientId } = await prepare(url.toString(), variants[0] as Variant);
    for (const [i, variant] of variants.entries()) {
      useVariant(i);
      const server = variant.floor ? startFloor(url.toString(), variant, clientId) : start(url.toString(), variant);
      servers.push(server);
      await (variant.floor ? floorReady(server, 60_000) : ready(server, 120_000));
    }
    const names = (args.scenarios ?? '').split(',');
    const figures = new Map<string, number[]>();
    for (let round = 0; round <= rounds; round++) {
      for (const name of names) {
        const request = scenarios[name];
        if (!request) throw new Error(`unknown scenario ${name}`);
        for (const [i, variant] of variants.entries()) {
          if (variant.floor && !FLOOR_SCENARIOS[variant.floor]?.includes(name)) continue;
          useVariant(i);
          const pid = servers[i]?.pid as number;
          const n = round === 0 ? warmup : requests;
          const before = cpuTicks(pid);
          await sendMany(request, n);
          const micros = ((cpuTicks(pid) - before) * 10_000) / n;
          if (round === 0) continue;
          const key = `${name} ${variant.name}`;
          figures.set(key, [...(figures.get(key) ?? []), micros]);
          log(`round ${round} ${key}: ${Math.round(micros)} us/req`);
        }
      }
      if (round > 0)
        log(
          `round ${round}/${rounds} done; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
        );
    }
    for (const name of names) {
      for (const variant of variants) {
        const values = figures.get(`${name} ${variant.name}`) ?? [];
        if (values.length === 0) continue;
        log(
          `${name} ${variant.name}: median ${Math.round(median(values))} us/req, min ${Math.round(Math.min(...values))} (rounds: ${values.map(Math.round).join(', ')})`,
        );
      }
    }
  } finally {
    for (const server of servers) await stop(server);
    await pg.unsafe(`drop database if exists ${dbName} with (force)`);
    await pg.end();
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
