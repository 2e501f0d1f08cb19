#!/usr/bin/env node
// Bundles the server's own TypeScript (server/, routers/, rest-facade/, db/) into one ES module,
// `server/dist/main.mjs`, that plain `node` runs: `npm start` runs this first (`prestart`).
// npm packages stay external and load from node_modules as usual. Why not `node --import tsx`:
// on Node 20 the tsx loader runs its hooks on a second V8 isolate and keeps source maps, ~35-40 MB
// of RSS and ~0.5 s of start-up (measured, bench/README.md). Tests and the CLI still run the
// sources through vitest and tsx. The browser apps (console, portal) are web/build.mjs's.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = (dir) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
const pkg = manifest('.');
// The workspaces (@atrium/*) are TypeScript sources: bundled, never external. The packages they
// declare themselves (graphql-yoga in rest-facade, say) are external like the root's.
const declared = [pkg, ...pkg.workspaces.map(manifest)].flatMap((p) => [
  ...Object.keys(p.dependencies ?? {}),
  ...Object.keys(p.devDependencies ?? {}),
]);
const external = [...new Set(declared)]
  .filter((name) => !name.startsWith('@atrium/'))
  .flatMap((name) => [name, `${name}/*`]);

export const outfile = join(root, 'server', 'dist', 'main.mjs');

/** Bundles into `out` (default `outfile`); a test may build a copy of its own beside it. */
export async function buildServer(out = outfile, entry = 'main.ts') {
  await build({
    entryPoints: [join(root, 'server', 'src', entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external,
    outfile: out,
    // Nothing is minified, so stack traces read without source maps. No `keepNames`: its
    // `__name` helper ran at every closure's creation (about 1 % of a request's CPU, bench/README.md),
    // no class is renamed by the bundle (so `constructor.name`, which pino's error serializer logs,
    // is the source's), and nothing reads a function's `name`; a function whose name collides with
    // another module's appears in a stack trace with a numeric suffix (`statusOf2`).
    legalComments: 'none',
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * `--all` (the Dockerfile): the worker (`worker.mjs`) and the migrator (`migrate.mjs`) too, so an
 * image runs `npm start`, `npm run worker` and `npm run migrate` with plain node and no sources.
 */
export async function buildAll() {
  const dist = dirname(outfile);
  await buildServer(outfile);
  await buildServer(join(dist, 'worker.mjs'), 'worker-main.ts');
  await buildServer(join(dist, 'migrate.mjs'), 'migrate-main.ts');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === '--all') await buildAll();
  else await buildServer(process.argv[2]);
}
