import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '@atrium/db';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort, killSpawnedServers, type SpawnedServer, spawnServer } from '../helpers/spawn-server.ts';

/** These start the server on embedded storage whatever the run's database: once, in the PGlite run. */
const onPostgres = Boolean(inject('databaseUrl'));

/**
 * The embedded data directory of the real server process: one process owns it (a lock file
 * holding its pid), and it is private to the user running Atrium (it holds webhook secrets and
 * the generated master key).
 */
const LOCK_FILE = 'atrium.pid';
const root = mkdtempSync(join(tmpdir(), 'atrium-data-dir-'));

afterAll(() => {
  killSpawnedServers();
  rmSync(root, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<SpawnedServer> {
  return spawnServer({ ATRIUM_DATA_DIR: dataDir }, await freePort());
}

/** SIGTERM, then the exit must be a clean one (the server's output is the message when it is not). */
async function stopCleanly(server: SpawnedServer): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
}

/** Every path under a directory whose mode lets group or others in, with that mode. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) found.push(`${mode.toString(8)} ${path}`);
    if (entry.isDirectory()) found.push(...openToOthers(path));
  }
  return found;
}

/** A pid that no process has any more. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe.skipIf(onPostgres)('one process per data directory', () => {
  const dataDir = join(root, 'locked');

  it('a second server on the same directory stops before opening it, naming the first one pid; the first keeps serving', async () => {
    const first = await start(dataDir);
    const apiKey = /WORKOS_API_KEY=(sk_test_\w+)/.exec(first.output())?.[1];
    const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${first.url}/organizations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Held' }),
    });
    expect(created.status).toBe(201);

    // Another port, so nothing but the lock can stop it.
    const second = await start(dataDir).then(
      (server) => {
        server.child.kill('SIGKILL');
        return `it started:\n${server.output()}`;
      },
      (error: Error) => error.message,
    );
    expect(second).toContain(
      `The data directory ${dataDir} is in use by another Atrium process (pid ${first.child.pid}`,
    );
    expect(second).not.toMatch(/listening|migrat/i);

    const listed = await fetch(`${first.url}/organizations`, { headers });
    expect(((await listed.json()) as { data: { name: string }[] }).data.map((o) => o.name)).toEqual(['Held']);
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(first.child.pid));
    await stopCleanly(first);
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  }, 120_000);

  it('a lock left by a process that is gone (a crash, SIGKILL) is taken over', async () => {
    const stale = await deadPid();
    writeFileSync(join(dataDir, LOCK_FILE), `${stale}\n`);
    const server = await start(dataDir);
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(server.child.pid));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    server.child.kill('SIGKILL');
    await server.exited;
    // SIGKILL leaves the lock behind; the next start takes it over.
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(server.child.pid));
    const next = await start(dataDir);
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim()).toBe(String(next.child.pid));
    await stopCleanly(next);
  }, 120_000);

  it('in one process, a second open of the directory is refused until the first is closed', async () => {
    const umask = process.umask(0o077); // openDb sets it; this worker's other files get theirs back
    const handle = await openDb({ dataDir });
    try {
      await expect(openDb({ dataDir })).rejects.toThrow(
        `The data directory ${dataDir} is already open in this process (pid ${process.pid}).`,
      );
    } finally {
      await handle.close();
    }
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    const again = await openDb({ dataDir });
    await again.close();
    process.umask(umask);
  }, 60_000);
});

describe.skipIf(onPostgres)('a private data directory', () => {
  it('a first start makes the directory and the parents it creates 0700, and no file under it readable by others', async () => {
    const parent = join(root, 'fresh');
    const dataDir = join(parent, 'data');
    const server = await start(dataDir);
    await fetch(`${server.url}/healthz`);
    await stopCleanly(server);
    expect((statSync(parent).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect(readdirSync(dataDir)).toContain('PG_VERSION');
    expect(openToOthers(dataDir)).toEqual([]);
  }, 120_000);

  it('an existing directory open to others is made 0700 at start, its files private, with a warning', async () => {
    const dataDir = join(root, 'wide');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'notes.txt'), 'left here by an older version', { mode: 0o644 });
    chmodSync(join(dataDir, 'notes.txt'), 0o644);
    const server = await start(dataDir);
    expect(server.output()).toContain(
      `The data directory ${dataDir} was open to other users (mode 755); it is now 0700.`,
    );
    await stopCleanly(server);
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect(openToOthers(dataDir)).toEqual([]);
  }, 120_000);
});
