import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// semver comes with patch-package (a runtime dependency), so it is always installed.
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface LockedPackage {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  engines?: { node?: string };
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const floor = semver.minVersion(pkg.engines.node)?.version as string;

/** The locked packages whose declared Node range leaves out package.json's floor. */
function above(dev: boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, info]) => path !== '' && Boolean(info.dev) === dev && !info.optional && info.engines?.node)
    .filter(([, info]) => !semver.satisfies(floor, info.engines?.node as string))
    .map(([path, info]) => `${path.replace(/^.*node_modules\//, '')} ${info.engines?.node}`);
}

describe('the Node floor in package.json', () => {
  it('is one every runtime dependency (npm start, the CLI, the worker) declares it runs on', () => {
    expect(floor).toBe('20.19.0');
    expect(above(false)).toEqual([]);
  });

  it('is below the floor of two test-only packages, which the README names', () => {
    // Both run on Node 20 in this suite; npm prints EBADENGINE for them below Node 22.
    expect(above(true)).toEqual(expect.arrayContaining(['@workos-inc/node >=22.11.0', 'dns2 >=22']));
  });
});
