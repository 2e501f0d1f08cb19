import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, inject, it } from 'vitest';

/** Static code and plain node runs, the same whatever the run's database: once, in the PGlite run. */
const onPostgres = Boolean(inject('databaseUrl'));

/**
 * Shapes of code after which V8 (Node 20's 11.3) keeps a request's objects alive across its
 * scavenges, to be promoted and collected only by the next mark-compact (bench/README.md, tenth
 * pass): an object literal with a getter or setter, an object literal of two spreads, and an
 * awaited Promise subclass that keeps a closure made in its constructor (postgres.js's `Query`
 * before patches/postgres+3.4.9.patch). Under load they made most of what V8 promoted and a
 * mark-compact every ~0.3 s. This file holds the service's code and the patched driver to that.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const exec = promisify(execFile);

/** Bytes V8 promotes per scavenge, on average, while `script` runs (1 MB semi-space). */
async function promotedPerScavenge(script: string): Promise<number> {
  const { stdout } = await exec(
    process.execPath,
    ['--trace-gc-nvp', '--max-semi-space-size=1', '--input-type=module', '-e', script],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  let scavenges = 0;
  let promoted = 0;
  for (const line of stdout.split('\n')) {
    if (!line.includes('gc=s ')) continue;
    scavenges += 1;
    promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  if (scavenges < 10) throw new Error(`too few scavenges to judge (${scavenges})`);
  return promoted / scavenges;
}

/** 100,000 awaited values, each made by `make` (a function expression's source). */
const loop = (prelude: string, make: string) =>
  `${prelude}\nconst make = ${make};\nfor (let i = 0; i < 100000; i++) await make(i);`;

const driverDir = dirname(createRequire(import.meta.url).resolve('postgres')); // …/postgres/cjs/src

/** The engine the pathology was measured on (Node 20): there, unpatched shapes must promote. */
const NODE_20_V8 = process.versions.v8.startsWith('11.3.');

const handler = 'const handler = (q) => q.resolve(1);';
/** Promotion per scavenge of the patched driver's `Query`, ESM and CommonJS copies (measured once). */
let patched: Promise<{ esm: number; cjs: number }> | undefined;
const patchedQueries = () => {
  patched ??= (async () => ({
    esm: await promotedPerScavenge(
      loop(
        `import { Query } from ${JSON.stringify(join(driverDir, '../../src/query.js'))};\n${handler}`,
        `() => new Query(['select 1'], [], handler, null)`,
      ),
    ),
    cjs: await promotedPerScavenge(
      loop(
        `import { createRequire } from 'node:module';\nconst { Query } = createRequire(import.meta.url)(${JSON.stringify(join(driverDir, 'query.js'))});\n${handler}`,
        `() => new Query(['select 1'], [], handler, null)`,
      ),
    ),
  }))();
  return patched;
};

describe.skipIf(onPostgres)('what V8 promotes', () => {
  it('promotes next to nothing for awaited postgres.js queries (ESM and CommonJS copies)', async () => {
    const { esm, cjs } = await patchedQueries();
    expect(esm).toBeLessThan(20_000);
    expect(cjs).toBeLessThan(20_000);
  });

  it.runIf(NODE_20_V8)(
    "promotes over 5x less than the unpatched constructor's shape, which promotes on Node 20",
    async () => {
      const { esm, cjs } = await patchedQueries();
      // The unpatched constructor's shape: ~250 KB per scavenge on Node 20.
      const unpatched = await promotedPerScavenge(
        loop(
          `class Query extends Promise {
          constructor() { let resolve; super((a) => { resolve = a }); this.resolve = (x) => resolve(x) }
          static get [Symbol.species]() { return Promise }
        }`,
          `() => { const q = new Query(); q.resolve(1); return q }`,
        ),
      );
      expect(unpatched).toBeGreaterThan(50_000);
      expect(Math.max(esm, cjs) * 5).toBeLessThan(unpatched);
    },
  );

  it.runIf(NODE_20_V8)('sees the pathology it guards against: a getter in an object literal promotes', async () => {
    const plain = await promotedPerScavenge(loop('', '(i) => Promise.resolve({ a: i, b: 2 })'));
    const getter = await promotedPerScavenge(loop('', '(i) => Promise.resolve({ a: i, get b() { return 2 } })'));
    expect(plain).toBeLessThan(20_000);
    // On Node 20 the getter promotes ~15x more.
    expect(getter).toBeGreaterThan(50_000);
    expect(plain * 5).toBeLessThan(getter);
  });
});

/** The service's own TypeScript (tests and generated files aside). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

describe("the service's code", () => {
  it('has no object literal with a getter or setter, nor one of two spreads', () => {
    const found: string[] = [];
    for (const file of ['db', 'routers', 'rest-facade', 'server'].flatMap((p) => sources(join(root, p, 'src')))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isObjectLiteralExpression(node)) {
          const accessors = node.properties.filter((p) => ts.isGetAccessor(p) || ts.isSetAccessor(p)).length;
          const spreads = node.properties.filter(ts.isSpreadAssignment).length;
          if (accessors > 0 || spreads > 1) {
            const { line } = source.getLineAndCharacterOfPosition(node.getStart());
            found.push(`${relative(root, file)}:${line + 1}`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    // A class's getters and Object.assign do the same without the cost (see the file's header).
    expect(found).toEqual([]);
  });
});
