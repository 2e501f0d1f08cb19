/**
 * What the A/B tools (cpu-ab.ts, commits-ab.ts, scim-cpu-ab.ts) share, written once: how they
 * start Atrium, and what they read and summarise.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** What an A/B tool defaults to: calls per block, warm-up calls, rounds, calls in flight, first port. */
export interface AbDefaults {
  requests: string;
  warmup: string;
  rounds: string;
  concurrency: string;
  port: string;
}

/**
 * The options every A/B tool takes (parseArgs), with its own defaults: `--requests`,
 * `--warmup`, `--rounds`, `--concurrency`, `--port`, `--pg-url`, `--variant` (repeated) and
 * `--server-output`.
 */
export function abOptions(defaults: AbDefaults) {
  return {
    requests: { type: 'string', default: defaults.requests },
    warmup: { type: 'string', default: defaults.warmup },
    rounds: { type: 'string', default: defaults.rounds },
    concurrency: { type: 'string', default: defaults.concurrency },
    port: { type: 'string', default: defaults.port },
    'pg-url': { type: 'string' },
    variant: { type: 'string', multiple: true },
    'server-output': { type: 'string' },
  } as const;
}

/** Those options read, and the run's secrets: an admin token and a master key, new each run. */
export function abSettings(args: {
  requests: string;
  warmup: string;
  rounds: string;
  concurrency: string;
  port: string;
  'pg-url'?: string | undefined;
}) {
  return {
    requests: Number(args.requests),
    warmup: Number(args.warmup),
    rounds: Number(args.rounds),
    concurrency: Math.max(1, Number(args.concurrency)),
    firstPort: Number(args.port),
    adminUrl: args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    adminToken: `atrium_admin_${randomBytes(20).toString('hex')}`,
    masterKey: randomBytes(32).toString('base64'),
  };
}

/**
 * node's arguments for a server as `npm start` runs it in `checkout` (its start script's node
 * flags), with `flags` added and, given a `script`, that bundle or floor in place of the start
 * script's (a path relative to the checkout).
 */
export function startArgs(checkout: string, flags: readonly string[], script?: string): string[] {
  const pkg = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const parts = pkg.scripts.start.trim().split(/\s+/);
  return [...parts.slice(1, -1), ...flags, resolve(checkout, script || (parts.at(-1) as string))];
}

/** Where an A/B tool's Atrium listens and keeps its data, and what it is called at. */
export interface AbServer {
  databaseUrl: string;
  port: number;
  dataDir: string;
  /** ATRIUM_PUBLIC_URL, the issuer of the tokens it mints (default: its own URL). */
  publicUrl?: string;
}

/**
 * The environment an A/B tool runs Atrium in: nothing from the caller's shell but PATH and HOME,
 * no rate limit in the way (the limiter still counts), one process, warnings only.
 */
export function abServerEnv(
  secrets: { adminToken: string; masterKey: string },
  server: AbServer,
): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: server.databaseUrl,
    PORT: String(server.port),
    HOST: '127.0.0.1',
    ATRIUM_ADMIN_TOKEN: secrets.adminToken,
    ATRIUM_MASTER_KEY: secrets.masterKey,
    ATRIUM_PUBLIC_URL: server.publicUrl ?? `http://127.0.0.1:${server.port}`,
    RATE_LIMIT_REQUESTS: '1000000000',
    RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS: '1000000000',
    RATE_LIMIT_STORE: 'postgres',
    ATRIUM_PROCESSES: '1',
    ATRIUM_DATA_DIR: server.dataDir,
    LOG_LEVEL: 'warn',
  };
}

const written = new Set<string>();

/**
 * `--server-output dir`: a variant's stdout to `dir/<name>.txt` (`--trace-gc-nvp`'s lines, for
 * bench/gc-summary.ts), emptied when this run first writes it; without a dir it is dropped.
 */
export function serverOutput(dir: string | undefined, name: string): 'ignore' | number {
  if (!dir) return 'ignore';
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.txt`);
  const flags = written.has(file) ? 'a' : 'w';
  written.add(file);
  return openSync(file, flags);
}

/** The GraphQL scenario's request (issue #35's `organization` query), with a widget token's headers. */
export function graphqlOrganizationRequest(widget: Record<string, string>, organizationId: string) {
  return {
    method: 'POST',
    path: '/client/graphql',
    headers: { ...widget, Accept: 'application/graphql-response+json, application/json' },
    body: JSON.stringify({
      query: 'query Organization($id: ID!) { organization(id: $id) { id name } }',
      variables: { id: organizationId },
    }),
  };
}

/** utime + stime of a process, in clock ticks (1/100 s on Linux). */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
