import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const alive = new Set<ChildProcess>();

/** Kills (SIGKILL) every server this process spawned that is still running. */
export function killSpawnedServers(): void {
  for (const child of alive) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  alive.clear();
}

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the real server (`tsx server/src/main.ts`) and resolves once it listens. */
export async function spawnServer(env: Record<string, string>, port: number): Promise<SpawnedServer> {
  const server = await spawnEntry(
    'server/src/main.ts',
    { LOG_LEVEL: 'warn', RATE_LIMIT: 'off', ...env, PORT: String(port), HOST: '127.0.0.1' },
    'Atrium is listening on',
  );
  return { ...server, url: `http://127.0.0.1:${port}` };
}

export interface SpawnedProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts a server entry point (`main.ts`, `worker-main.ts`, `migrate-main.ts`), resolving once
 * its output holds `ready` (or at once when `ready` is undefined).
 */
export async function spawnEntry(
  entry: string,
  env: Record<string, string>,
  ready: string | undefined,
): Promise<SpawnedProcess> {
  // `node --import tsx`, not the tsx CLI: the CLI is a parent process that relays signals, so
  // a SIGKILL would hit it and orphan the real server.
  return spawnNode(
    entry,
    ['--import', 'tsx', entry],
    { ...process.env, LOG_LEVEL: 'info', ...env },
    ready === undefined ? undefined : (out) => out.includes(ready),
  );
}

/**
 * Runs `node ...args` from the repository root with exactly `env`, collecting its stdout and
 * stderr, and resolves once `ready(output)` holds (at once without `ready`); `name` labels errors.
 */
export async function spawnNode(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: ((output: string) => boolean) | undefined,
  timeoutMs = 60_000,
): Promise<SpawnedProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const started = Date.now();
  while (ready !== undefined && !ready(out)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited early:\n${out}`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => out, exited };
}
