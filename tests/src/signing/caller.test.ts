import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signingKeys } from '@atrium/db';
import { decryptPrivateKey, parseMasterKey } from '@atrium/routers';
import { resolveMasterKey } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('master key', () => {
  it('is required with DATABASE_URL', () => {
    expect(() =>
      resolveMasterKey({ masterKey: undefined, databaseUrl: 'postgres://x', dataDir: '/nonexistent' }, () => {}),
    ).toThrow(/ATRIUM_MASTER_KEY \(unset\): expected 32 random bytes with DATABASE_URL/);
  });

  it('is generated once into the data directory with mode 0600 and a warning, then reused', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atrium-mk-'));
    dirs.push(dataDir);
    const warnings: string[] = [];
    const first = resolveMasterKey({ masterKey: undefined, databaseUrl: undefined, dataDir }, (m) => warnings.push(m));
    expect(first).toHaveLength(32);
    expect(warnings).toHaveLength(1);
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    const second = resolveMasterKey({ masterKey: undefined, databaseUrl: undefined, dataDir }, (m) => warnings.push(m));
    expect(second.equals(first)).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(readFileSync(join(dataDir, 'master.key'), 'utf8').trim()).toBe(first.toString('base64'));
  });

  it('accepts 32 bytes as hex or base64 and refuses anything else', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('hex'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64url'))).toEqual(key);
    expect(() => parseMasterKey('short')).toThrow(/32 bytes/);
  });

  it.each([
    ['all zero (hex)', '0'.repeat(64)],
    ['all zero (base64)', Buffer.alloc(32).toString('base64')],
    ['one byte repeated', 'ab'.repeat(32)],
    ['all 0xff', Buffer.alloc(32, 0xff).toString('base64')],
    ['a 2-byte pattern', 'beef'.repeat(16)],
    ['an 8-byte pattern', '0123456789abcdef'.repeat(4)],
    ['a 16-byte pattern', randomBytes(16).toString('hex').repeat(2)],
    ['a counting sequence', Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex')],
    [
      'few distinct bytes',
      Buffer.from(Array.from({ length: 32 }, (_, i) => [1, 9, 42][(i * 7) % 3] as number)).toString('hex'),
    ],
  ])('refuses a key without entropy: %s', (_label, raw) => {
    expect(() => parseMasterKey(raw)).toThrow(/ATRIUM_MASTER_KEY is not random/);
  });

  it('refuses an all-zero ATRIUM_MASTER_KEY at start-up', () => {
    expect(() =>
      resolveMasterKey({ masterKey: '0'.repeat(64), databaseUrl: 'postgres://x', dataDir: '/nonexistent' }, () => {}),
    ).toThrow(/ATRIUM_MASTER_KEY is not random.*openssl rand -base64 32/);
  });

  it('encrypts private signing keys at rest; another master key cannot open them', async () => {
    const env = await newEnvironment();
    await env.http.get(`/sso/jwks/${env.clientId}`);
    const [row] = await env.deps.db.select().from(signingKeys).where(eq(signingKeys.environmentId, env.environmentId));
    expect(row?.privateKeyEncrypted).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    const key = decryptPrivateKey(env.deps.tokens.masterKey, row?.id as string, row?.privateKeyEncrypted as string);
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    // No DER in clear, in either base64 alphabet. (A bare 'MII' turns up in random ciphertext
    // about once in 150 runs; a 48-character run of the key cannot.)
    const der = key.export({ format: 'der', type: 'pkcs8' });
    for (const encoding of ['base64', 'base64url'] as const) {
      expect(row?.privateKeyEncrypted).not.toContain(der.toString(encoding).slice(0, 48));
    }
    expect(() => decryptPrivateKey(Buffer.alloc(32), row?.id as string, row?.privateKeyEncrypted as string)).toThrow(
      /cannot be decrypted/,
    );
  });
});

describe('a server given a key without entropy', () => {
  it('exits at start-up naming ATRIUM_MASTER_KEY, before it opens or migrates its data directory', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'atrium-mk-')), 'data');
    dirs.push(dirname(dataDir));
    // Only what the server needs: nothing of the caller's ATRIUM_*, WORKOS_* or DATABASE_URL.
    const env = {
      PATH: process.env.PATH ?? '',
      ATRIUM_MASTER_KEY: '0'.repeat(64),
      ATRIUM_DATA_DIR: dataDir,
      PORT: '0',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
      cwd: fileURLToPath(new URL('../../../', import.meta.url)),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // Resolves when it exits, or (the bug) as soon as it listens; either way it is stopped.
    const code = await new Promise<number | null | 'listening'>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('listening on')) resolve('listening');
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', resolve);
    }).finally(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    // Exit 2: a configuration error, reported with the others before anything is opened.
    expect(code).toBe(2);
    expect(output).toMatch(
      /ATRIUM_MASTER_KEY \(64 characters, not shown\): expected 32 random bytes, not repeated or patterned.*openssl rand -base64 32/,
    );
    expect(output).not.toContain('listening');
    expect(existsSync(dataDir)).toBe(false);
  }, 30_000);
});
