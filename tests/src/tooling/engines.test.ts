import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
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
  dependencies?: Record<string, string>;
  hasInstallScript?: boolean;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string; npm?: string };
  dependencies: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const floor = semver.minVersion(pkg.engines.node)?.version as string;

/**
 * Runtime packages whose code Node never runs: Atrium serves `@scalar/api-reference`'s browser
 * bundle as a file (`/docs`), so neither it nor what only it depends on sets the Node floor.
 */
const ASSETS_ONLY = new Set(['@scalar/api-reference']);

/** Where Node resolves `name` from the package at `from` (a lock path): nested first, then up. */
function resolveIn(from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    const path = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lock.packages[path]) return path;
    if (dir === '') return undefined;
  }
}

/** The lock paths of every package the server's own code can load (its dependencies, transitively). */
function runtimeClosure(): Set<string> {
  const seen = new Set<string>();
  const queue = Object.keys(pkg.dependencies)
    .filter((name) => !ASSETS_ONLY.has(name))
    .map((name) => resolveIn('', name));
  while (queue.length > 0) {
    const path = queue.pop();
    if (path === undefined || seen.has(path)) continue;
    seen.add(path);
    for (const name of Object.keys(lock.packages[path]?.dependencies ?? {})) queue.push(resolveIn(path, name));
  }
  return seen;
}

/** The locked packages whose declared Node range leaves out package.json's floor. */
function above(dev: boolean): string[] {
  const runtime = runtimeClosure();
  return Object.entries(lock.packages)
    .filter(([path, info]) => path !== '' && (dev ? Boolean(info.dev) : runtime.has(path)) && !info.optional)
    .filter(([, info]) => info.engines?.node && !semver.satisfies(floor, info.engines.node))
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

/** The npm that Node 20.19 ships (node:20 images and installers): it ignores `allowScripts`. */
const NODE_20_NPM = '10.8.2';

describe('installing with the npm that Node 20 ships', () => {
  it('declares an npm floor that npm 10 meets', () => {
    expect(pkg.engines.npm).toBeDefined();
    expect(semver.satisfies(NODE_20_NPM, pkg.engines.npm as string)).toBe(true);
  });

  it('locks no dependency whose install script allowScripts denies or has not reviewed', () => {
    // npm 10 runs every dependency's install script, whatever allowScripts says, so a denied one
    // (a network download, say) would run and fail offline: only reviewed, offline-safe ones.
    const scripted = Object.entries(lock.packages)
      .filter(([path, info]) => path !== '' && info.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(scripted.length).toBeGreaterThan(0);
    expect([...new Set(scripted)].filter((name) => pkg.allowScripts?.[name] !== true)).toEqual([]);
  });
});
