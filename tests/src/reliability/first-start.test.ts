import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort, killSpawnedServers, spawnEntry } from '../helpers/spawn-server.ts';

/** These start the server on embedded storage whatever the run's database: once, in the PGlite run. */
const onPostgres = Boolean(inject('databaseUrl'));

/**
 * What a newcomer meets on the first `npm start` (the real server process, on PGlite): a port
 * in use, a public URL that differs from the port, and bad settings.
 */
const root = mkdtempSync(join(tmpdir(), 'atrium-first-start-'));

afterAll(() => {
  killSpawnedServers();
  rmSync(root, { recursive: true, force: true });
});

/** Holds a port as another program would. */
function holdPort(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** Runs `entry` with exactly these settings (none from the caller's shell) until it exits. */
async function runToExit(entry: string, env: Record<string, string>) {
  const started = await spawnEntry(
    entry,
    { DATABASE_URL: '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
    undefined,
  );
  const { code } = await started.exited;
  return { code, output: started.output() };
}

/** A stack frame as Node prints one. */
const STACK_FRAME = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

describe.skipIf(onPostgres)('a first start on a port in use', () => {
  it('exits with one line suggesting PORT=, burns no secret, and the next start prints both', async () => {
    const dataDir = join(root, 'busy');
    const port = await freePort();
    const holder = await holdPort(port);
    const busy = await runToExit('server/src/main.ts', { ATRIUM_DATA_DIR: dataDir, PORT: String(port) });
    holder.close();
    expect(busy.code).toBe(1);
    const lines = busy.output.split('\n').filter((line) => line.startsWith('Atrium could not start'));
    expect(lines).toEqual([
      `Atrium could not start: port ${port} on 127.0.0.1 is in use (another Atrium, or another server?). Start on another port, e.g. PORT=8080 npm start, or stop what holds it.`,
    ]);
    expect(busy.output).not.toMatch(STACK_FRAME);
    expect(busy.output).not.toContain('EADDRINUSE');
    expect(busy.output).not.toContain('atrium_admin_');
    expect(busy.output).not.toContain('sk_test_');

    // Another port, the same data: the secrets were never made, so this start makes and prints them.
    const next = await freePort();
    const started = await spawnEntry(
      'server/src/main.ts',
      { DATABASE_URL: '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ATRIUM_DATA_DIR: dataDir, PORT: String(next) },
      'Operator console:',
    );
    expect(started.output()).toMatch(/export ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}\n/);
    expect(started.output()).toMatch(/export WORKOS_API_KEY=sk_test_\w{40}\n/);
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
  }, 120_000);
});

describe.skipIf(onPostgres)('the banner when ATRIUM_PUBLIC_URL differs from PORT, and readable logs', () => {
  it('names the port it listens on, the public URL apart, and the two exports the CLI reads', async () => {
    const port = await freePort();
    const started = await spawnEntry(
      'server/src/main.ts',
      {
        DATABASE_URL: '',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        ATRIUM_DATA_DIR: join(root, 'public-url'),
        PORT: String(port),
        ATRIUM_PUBLIC_URL: 'http://localhost:3000',
        // What a terminal gets (stderr a TTY): pino-pretty's lines instead of JSON.
        LOG_FORMAT: 'pretty',
      },
      'Operator console:',
    );
    const printed = started.output();
    started.child.kill('SIGTERM');
    await started.exited;
    expect(printed).toContain(`Atrium is listening on http://127.0.0.1:${port} (storage: embedded PGlite in `);
    expect(printed).toContain('Public URL (ATRIUM_PUBLIC_URL): http://localhost:3000\n');
    expect(printed).toContain('  export ATRIUM_URL=http://localhost:3000\n');
    expect(printed).toMatch(/ {2}export ATRIUM_ADMIN_TOKEN=atrium_admin_\w{40}\n/);
    expect(printed).not.toContain(':3000 (storage');
    expect(printed).toMatch(/^\[[\d:.]+\] WARN: ATRIUM_MASTER_KEY is not set/m);
    expect(printed).not.toContain('{"level"');
  }, 120_000);
});

describe.skipIf(onPostgres)('bad configuration', () => {
  const cases: [string, Record<string, string>, string[]][] = [
    [
      'a short master key',
      { ATRIUM_MASTER_KEY: 'short' },
      ['ATRIUM_MASTER_KEY (5 characters, not shown): expected 32'],
    ],
    ['a port that is not a number', { PORT: 'abc' }, ['PORT="abc": expected a whole number from 0 to 65535']],
    ['a port out of range', { PORT: '80800' }, ['PORT="80800": expected a whole number from 0 to 65535']],
    [
      'SMTP_URL without SMTP_FROM',
      { SMTP_URL: 'smtp://mailer:mailpass@127.0.0.1:2525' },
      ['SMTP_FROM (unset): expected the sender with SMTP_URL'],
    ],
    [
      'a MySQL DATABASE_URL',
      { DATABASE_URL: 'mysql://root:dbpass@127.0.0.1:3306/atrium' },
      [
        'DATABASE_URL="mysql://root:***@127.0.0.1:3306/atrium": expected a URL like postgres://',
        // With any DATABASE_URL a server needs the master key too: said now, not on the next try.
        'ATRIUM_MASTER_KEY (unset): expected 32 random bytes with DATABASE_URL',
      ],
    ],
    [
      // Checked before any connection: port 1 refuses, and the start never gets that far.
      'PostgreSQL without a master key',
      { DATABASE_URL: 'postgres://atrium:dbpass@127.0.0.1:1/atrium' },
      ['ATRIUM_MASTER_KEY (unset): expected 32 random bytes with DATABASE_URL'],
    ],
    [
      'all of them at once',
      {
        ATRIUM_MASTER_KEY: 'short',
        PORT: 'abc',
        SMTP_URL: 'smtp://mailer:mailpass@127.0.0.1:2525',
        DATABASE_URL: 'mysql://root:dbpass@127.0.0.1:3306/atrium',
        LOG_LEVEL: 'loud',
      },
      [
        'PORT="abc"',
        'DATABASE_URL="mysql://root:***@',
        'LOG_LEVEL="loud": expected one of fatal, error',
        'ATRIUM_MASTER_KEY (5',
        'SMTP_FROM (unset)',
      ],
    ],
  ];

  it.each(cases)(
    '%s: exit 2, every bad variable on stderr, no stack, nothing written',
    async (_name, env, expected) => {
      const dataDir = join(root, `bad-${Math.random().toString(36).slice(2)}`);
      const { code, output } = await runToExit('server/src/main.ts', { PORT: '0', ATRIUM_DATA_DIR: dataDir, ...env });
      expect(code).toBe(2);
      const lines = output.trimEnd().split('\n');
      expect(lines[0]).toMatch(
        /^Atrium cannot start: (a setting is|\d+ settings are) invalid \(nothing was opened or written\):$/,
      );
      expect(lines).toHaveLength(expected.length + 1);
      for (const part of expected) expect(lines.filter((line) => line.includes(part))).toHaveLength(1);
      expect(output).not.toMatch(STACK_FRAME);
      // No secret echoed: neither the key nor a password in a URL.
      for (const secret of ['short', 'mailpass', 'dbpass']) expect(output).not.toContain(secret);
      // Nothing written: no data directory, so no master.key.
      expect(existsSync(dataDir)).toBe(false);
    },
    60_000,
  );

  it('stops the migrator and the worker the same way', async () => {
    for (const entry of ['server/src/migrate-main.ts', 'server/src/worker-main.ts']) {
      const { code, output } = await runToExit(entry, { DATABASE_URL: 'mysql://root:dbpass@127.0.0.1/atrium' });
      expect(code, entry).toBe(2);
      expect(output).toContain('DATABASE_URL="mysql://root:***@127.0.0.1/atrium": expected a URL like postgres://');
      expect(output).not.toMatch(STACK_FRAME);
    }
  }, 60_000);
});
