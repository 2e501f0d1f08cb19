import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDatabase } from './scratch-database.ts';
import { freePort, spawnNode } from './spawn-server.ts';

/**
 * The server `npm start` runs (the esbuild bundle, with its V8 flags) as a separate process, for
 * the hostile-load tests, and the HTTP load helpers they drive it with.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The V8 flags of the `start` script: everything between `node` and the bundle. */
const startFlags = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .trim()
  .split(/\s+/)
  .slice(1, -1);

export interface BuiltServerOptions {
  /** Names the bundle (`server/dist/<name>-<pid>.mjs`, so that no two tests race on one), the scratch database and the data directory. */
  name: string;
  /** The run's PostgreSQL (`inject('databaseUrl')`): a database of its own there; without it, a PGlite data directory of its own. */
  databaseUrl: string | undefined;
  /** Added to the server's environment (which is otherwise clean: nothing of the caller's shell). */
  env?: Record<string, string>;
  /** Sets ATRIUM_PROCESSES, on a free port picked beforehand (by default one process on port 0). */
  processes?: number;
  startTimeoutMs?: number;
}

export interface BuiltServer {
  base: string;
  port: number;
  /** The primary process (with several processes, the one that forks the others). */
  pid: number;
  output: () => string;
  /** The API key and admin token the first-run banner prints, when it prints them. */
  apiKey: string | undefined;
  adminToken: string | undefined;
  exitCode: () => number | null;
  /** Kills the server (SIGKILL), and removes its bundle, data directory and database. */
  stop: () => Promise<void>;
}

/** Builds its own bundle, starts it, and resolves once it listens and has printed its banner. */
export async function startBuiltServer(options: BuiltServerOptions): Promise<BuiltServer> {
  const { name, databaseUrl, processes, startTimeoutMs = 60_000 } = options;
  const bundle = join(ROOT, 'server', 'dist', `${name}-${process.pid}.mjs`);
  execFileSync(process.execPath, ['server/build.mjs', bundle], { cwd: ROOT, stdio: 'pipe' });
  const fixedPort = processes === undefined ? 0 : await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(fixedPort),
    LOG_LEVEL: 'warn',
    ACCESS_LOG: 'off',
    ATRIUM_WORKERS: 'false',
    ATRIUM_MASTER_KEY: randomBytes(32).toString('base64'),
    ...(processes !== undefined && { ATRIUM_PROCESSES: String(processes) }),
    ...options.env,
  };
  let dataDir: string | undefined;
  let database: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  if (databaseUrl) {
    database = await scratchDatabase(databaseUrl, name.replace(/[^a-z0-9]/gi, ''));
    env.DATABASE_URL = database.url;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), `atrium-${name}-`));
    env.ATRIUM_DATA_DIR = dataDir;
  }
  const cleanup = async () => {
    rmSync(bundle, { force: true });
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  };
  const banner = /listening on (http:\/\/\S+)/;
  let started: Awaited<ReturnType<typeof spawnNode>>;
  try {
    started = await spawnNode(
      name,
      [...startFlags, bundle],
      env,
      (out) => banner.test(out) && out.includes('API reference'),
      startTimeoutMs,
    );
  } catch (error) {
    await cleanup();
    throw error;
  }
  const { child, output } = started;
  const url = banner.exec(output())?.[1] as string;
  return {
    // On a port of its own choosing, the server's word; on a fixed one, loopback.
    base: fixedPort ? `http://127.0.0.1:${fixedPort}` : url,
    port: fixedPort || Number(new URL(url).port),
    pid: child.pid as number,
    output,
    apiKey: /WORKOS_API_KEY=(sk_test_\w+)/.exec(output())?.[1],
    adminToken: /ATRIUM_ADMIN_TOKEN=(atrium_admin_\w+)/.exec(output())?.[1],
    exitCode: () => child.exitCode,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await started.exited;
      }
      await cleanup();
    },
  };
}

export interface Answer {
  status: number;
  body: string;
  /** From the request's start to its last byte. */
  ms: number;
  cookies: string[];
}

export interface CallOptions {
  /** Another pool of connections than the caller's. */
  agent?: Agent;
  /** The local address to call from (all of 127.0.0.0/8 is local on Linux). */
  localAddress?: string;
}

export type Call = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  options?: CallOptions,
) => Promise<Answer>;

/** A JSON caller of `base()` through `agent`; the body, when there is one, is sent as JSON. */
export function caller(agent: Agent, base: () => string): Call {
  return (method, path, headers, body, options = {}) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request(
        `${base()}${path}`,
        {
          method,
          agent: options.agent ?? agent,
          ...(options.localAddress && { localAddress: options.localAddress }),
          headers: payload === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              ms: performance.now() - started,
              cookies: res.headers['set-cookie'] ?? [],
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
}

/**
 * Runs `make` in `lanes` lanes until `until(calls made so far)` says stop (checked before each
 * call), passing each answer to `check`; resolves with every answer.
 */
export async function loop(
  lanes: number,
  until: (made: number) => boolean,
  make: (i: number) => Promise<Answer>,
  check: (answer: Answer, i: number) => void = () => {},
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  async function lane() {
    while (!until(next)) {
      const i = next++;
      const answer = await make(i);
      answers.push(answer);
      check(answer, i);
    }
  }
  await Promise.all(Array.from({ length: lanes }, lane));
  return answers;
}

/** Runs `count` calls, `concurrency` at a time. */
export function fire(
  count: number,
  concurrency: number,
  make: (i: number) => Promise<Answer>,
  check?: (answer: Answer, i: number) => void,
): Promise<Answer[]> {
  return loop(concurrency, (made) => made >= count, make, check);
}

/** How many answers had each status. */
export function tally(answers: Answer[]): Record<number, number> {
  const statuses: Record<number, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return statuses;
}

/** The 95th percentile of the answers' times, in whole ms. */
export function p95(answers: Answer[]): number {
  const sorted = answers.map((a) => a.ms).sort((x, y) => x - y);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0);
}

export const json = <T>(answer: Answer): T => JSON.parse(answer.body) as T;

/** A process's resident set, in MB to one decimal. */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A well-formed API key no environment has. */
export function bogusKey(): string {
  let key = 'sk_test_';
  for (const byte of randomBytes(40)) key += BASE62[byte % 62];
  return key;
}
