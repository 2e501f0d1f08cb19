import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdminClient } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

/** These start the server on embedded storage whatever the run's database: once, in the PGlite run. */
const onPostgres = Boolean(inject('databaseUrl'));

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'atrium-start-'));
const children: ChildProcess[] = [];

/** `npm start` is `node [flags] <bundle>`, built by `prestart`: the same, minus npm. */
const startScript = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .trim()
  .split(/\s+/);

beforeAll(() => {
  execFileSync(process.execPath, ['server/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
}, 60_000);

interface Started {
  child: ChildProcess;
  /** What the server printed on stdout (the banner) once ready. */
  stdout: string;
  /** What it has printed on stderr (its logs) so far. */
  readonly stderr: string;
  url: string;
}

/** Starts what `npm start` starts on a free port and resolves with what it printed once ready. */
function start(dir = dataDir, env: Record<string, string> = {}): Promise<Started> {
  return new Promise((resolve, reject) => {
    expect(startScript[0]).toBe('node');
    const child = spawn(process.execPath, startScript.slice(1), {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', ATRIUM_DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout}${stderr}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match && stdout.includes('API reference')) {
        clearTimeout(timer);
        resolve({
          child,
          stdout,
          get stderr() {
            return stderr;
          },
          url: match[1] as string,
        });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${stdout}${stderr}`)));
  });
}

/** What an admin tRPC call with this token answers. */
async function adminStatus(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/trpc/admin.environments.list`, { headers: { Authorization: `Bearer ${token}` } });
  await res.text();
  return res.status;
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('npm start on embedded storage', () => {
  it('prints an API key and an admin token once, and the key works as printed', async () => {
    const first = await start();
    const apiKey = /WORKOS_API_KEY=(sk_test_\w+)/.exec(first.stdout)?.[1];
    const clientId = /WORKOS_CLIENT_ID=(client_\w+)/.exec(first.stdout)?.[1];
    expect(apiKey).toMatch(/^sk_test_\w+$/);
    expect(clientId).toMatch(/^client_\w+$/);
    expect(first.stdout).toMatch(/ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}/);
    const res = await fetch(`${first.url}/organizations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Persisted' }),
    });
    expect(res.status).toBe(201);
    expect(await stop(first.child)).toBe(0);

    // A second start on the same data keeps the data and prints no secret again.
    const second = await start();
    expect(second.stdout + second.stderr).not.toContain('WORKOS_API_KEY=');
    expect(second.stdout + second.stderr).not.toContain('ATRIUM_ADMIN_TOKEN=');
    const list = await fetch(`${second.url}/organizations`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((o) => o.name)).toEqual(['Persisted']);
    expect(await stop(second.child)).toBe(0);
  }, 120_000);

  it('prints the first-start banner on stdout and its JSON logs on stderr, never mixed', async () => {
    const dir = join(dataDir, 'streams');
    const first = await start(dir, { LOG_LEVEL: 'info' });
    await fetch(`${first.url}/healthz`).then((res) => res.text());
    // 'close': the process has exited and its stdio streams are drained.
    const closed = new Promise((resolve) => first.child.once('close', resolve));
    expect(await stop(first.child)).toBe(0);
    await closed;
    const stderr = first.stderr;
    expect(first.stdout).toMatch(/ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}/);
    expect(first.stdout).toContain('WORKOS_API_KEY=sk_test_');
    expect(first.stdout.split('\n').filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    const logs = stderr
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining([expect.stringContaining('ATRIUM_MASTER_KEY is not set')]),
    );
    expect(logs.map((l) => l.msg)).toContain('shutting down');
    expect(stderr).not.toContain('atrium_admin_');
    expect(stderr).not.toContain('sk_test_');
  }, 120_000);

  it('makes ATRIUM_ADMIN_TOKEN the only admin token: after a restart with a new one, the old tokens are 401', async () => {
    const dir = join(dataDir, 'admin-token');
    const first = await start(dir);
    const generated = /ATRIUM_ADMIN_TOKEN=(atrium_admin_\w{40})/.exec(first.stdout)?.[1] as string;
    const made = await createAdminClient(first.url, generated).adminTokens.create.mutate();
    expect([await adminStatus(first.url, generated), await adminStatus(first.url, made.token)]).toEqual([200, 200]);
    expect(await stop(first.child)).toBe(0);

    const configured = `atrium_admin_${'C'.repeat(20)}${String(process.pid).padStart(20, '0')}`;
    const second = await start(dir, { ATRIUM_ADMIN_TOKEN: configured });
    expect(await adminStatus(second.url, configured)).toBe(200);
    expect(await adminStatus(second.url, generated)).toBe(401);
    expect(await adminStatus(second.url, made.token)).toBe(401);
    const listed = await createAdminClient(second.url, configured).adminTokens.list.query();
    expect(listed).toHaveLength(1);
    expect(listed[0]?.current).toBe(true);
    expect(second.stderr).toContain('ATRIUM_ADMIN_TOKEN is the only admin token: revoked the others');
    expect(await stop(second.child)).toBe(0);
  }, 120_000);
});

describe.skipIf(onPostgres)('the bundle npm start runs', () => {
  it('is ASCII only: one other character makes V8 hold its whole source as two-byte (2x)', () => {
    const bytes = readFileSync(join(ROOT, startScript[startScript.length - 1] as string));
    const at = bytes.findIndex((byte) => byte > 0x7f);
    const where = at === -1 ? 'ascii' : bytes.subarray(Math.max(0, at - 60), at + 20).toString('utf8');
    expect(where).toBe('ascii');
  });
});
