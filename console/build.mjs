#!/usr/bin/env node
// Bundles the operator console (console/src, React) into console/dist: index.html, console.js,
// console.css. The server serves that directory at /console (rest-facade/src/pipeline/console.ts);
// `npm start` builds it first (prestart), and the console tests build it themselves.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const consoleDist = join(here, 'dist');

/** Builds the console into `outdir` (default console/dist) and returns the directory. */
export async function buildConsole(outdir = consoleDist) {
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: [join(here, 'src', 'main.tsx')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    outfile: join(outdir, 'console.js'),
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(here, 'src', 'index.html'), join(outdir, 'index.html'));
  copyFileSync(join(here, 'src', 'console.css'), join(outdir, 'console.css'));
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildConsole(process.argv[2]);
