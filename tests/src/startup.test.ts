import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
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

/** Starts what `npm start` starts on a free port and resolves with what it printed once ready. */
function start(): Promise<{ child: ChildProcess; output: string; url: string }> {
  return new Promise((resolve, reject) => {
    expect(startScript[0]).toBe('node');
    const child = spawn(process.execPath, startScript.slice(1), {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', ATRIUM_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('API reference')) {
        clearTimeout(timer);
        resolve({ child, output, url: match[1] as string });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
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

describe('npm start on embedded storage', () => {
  it('prints an API key and an admin token once, and the key works as printed', async () => {
    const first = await start();
    const apiKey = /WORKOS_API_KEY=(sk_test_\w+)/.exec(first.output)?.[1];
    const clientId = /WORKOS_CLIENT_ID=(client_\w+)/.exec(first.output)?.[1];
    expect(apiKey).toBeDefined();
    expect(clientId).toBeDefined();
    expect(first.output).toMatch(/ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}/);
    const res = await fetch(`${first.url}/organizations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Persisted' }),
    });
    expect(res.status).toBe(201);
    expect(await stop(first.child)).toBe(0);

    // A second start on the same data keeps the data and prints no secret again.
    const second = await start();
    expect(second.output).not.toContain('WORKOS_API_KEY=');
    expect(second.output).not.toContain('ATRIUM_ADMIN_TOKEN=');
    const list = await fetch(`${second.url}/organizations`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((o) => o.name)).toEqual(['Persisted']);
    expect(await stop(second.child)).toBe(0);
  }, 120_000);
});

describe('the bundle npm start runs', () => {
  it('is ASCII only: one other character makes V8 hold its whole source as two-byte (2x)', () => {
    const bytes = readFileSync(join(ROOT, startScript[startScript.length - 1] as string));
    const at = bytes.findIndex((byte) => byte > 0x7f);
    const where = at === -1 ? 'ascii' : bytes.subarray(Math.max(0, at - 60), at + 20).toString('utf8');
    expect(where).toBe('ascii');
  });
});
