import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { CALLER_ENV } from '../global-setup.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NESTED = process.env.TEST_ENV_PROBE === 'nested';

/** What the README's walk-through leaves exported in the shell that then runs `npm test`. */
const README_SHELL = {
  ATRIUM_ADMIN_TOKEN: `atrium_admin_${'R'.repeat(40)}`,
  ATRIUM_URL: 'http://127.0.0.1:8080',
  ATRIUM_DATA_DIR: '/nonexistent/atrium-readme-shell',
  ATRIUM_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
  WORKOS_API_KEY: `sk_test_${'R'.repeat(40)}`,
  WORKOS_CLIENT_ID: 'client_01HZZZZZZZZZZZZZZZZZZZZZZZ',
};

describe("the caller's shell does not leak into the tests", () => {
  it('a worker sees no ATRIUM_*, WORKOS_* or DATABASE_URL (so neither do the servers and CLIs it spawns)', () => {
    expect(Object.keys(process.env).filter((name) => CALLER_ENV.test(name))).toEqual([]);
  });

  it.skipIf(NESTED)(
    "a vitest run started from the README's shell passes this file (its workers see none of that shell)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'atrium-test-env-'));
      try {
        const env: NodeJS.ProcessEnv = { ...process.env, ...README_SHELL, TEST_ENV_PROBE: 'nested' };
        // The suite's own choice of PostgreSQL stays: a PostgreSQL run hands its database on.
        const databaseUrl = inject('databaseUrl');
        if (databaseUrl) env.DATABASE_URL = databaseUrl;
        for (const name of Object.keys(env)) if (/^VITEST/.test(name)) delete env[name];
        const report = join(dir, 'report.json');
        const run = await promisify(execFile)(
          process.execPath,
          [
            join(ROOT, 'node_modules/vitest/vitest.mjs'),
            'run',
            'tests/src/tooling/test-env.test.ts',
            '--reporter=json',
            `--outputFile=${report}`,
          ],
          { cwd: ROOT, env, timeout: 90_000 },
        ).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
        const result = JSON.parse(readFileSync(report, 'utf8')) as {
          numPassedTests: number;
          numFailedTests: number;
          testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
        };
        const outcomes = result.testResults.flatMap((file) =>
          file.assertionResults.map((a) => `${a.status}: ${a.title}${a.failureMessages.join('\n')}`),
        );
        expect(outcomes, JSON.stringify(run).slice(0, 2000)).toEqual([
          'passed: a worker sees no ATRIUM_*, WORKOS_* or DATABASE_URL (so neither do the servers and CLIs it spawns)',
          "skipped: a vitest run started from the README's shell passes this file (its workers see none of that shell)",
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
