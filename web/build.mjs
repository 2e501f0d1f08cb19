#!/usr/bin/env node
// Bundles Atrium's two browser apps with esbuild, one script for both:
// - the operator console (src/console, React on the typed tRPC admin client) into dist/console:
//   index.html, console.js, console.css, served at /console (rest-facade/src/pipeline/console.ts);
// - the admin portal page (src/portal: the official @workos-inc/widgets, React and their styles)
//   into dist/portal: portal.js, portal.css, served at /portal/assets/ (rest-facade/src/portal.ts).
// `npm start` runs it first (prestart), the Dockerfile too; the console and portal tests build
// what they need themselves. `node web/build.mjs [outdir] [console|portal]`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const webDist = join(here, 'dist');

const common = {
  bundle: true,
  platform: 'browser',
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'warning',
};

const APPS = {
  async console(outdir) {
    const src = join(here, 'src', 'console');
    mkdirSync(outdir, { recursive: true });
    await build({
      ...common,
      entryPoints: [join(src, 'main.tsx')],
      format: 'esm',
      target: 'es2022',
      outfile: join(outdir, 'console.js'),
    });
    copyFileSync(join(src, 'index.html'), join(outdir, 'index.html'));
    copyFileSync(join(src, 'console.css'), join(outdir, 'console.css'));
  },
  async portal(outdir) {
    await build({
      ...common,
      entryPoints: { portal: join(here, 'src', 'portal', 'main.tsx') },
      format: 'iife',
      target: 'es2020',
      outdir,
      // The widgets' fonts and icons go into the bundle: the page loads nothing from a CDN.
      loader: { '.woff': 'dataurl', '.woff2': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl' },
    });
  },
};

/** The apps this script builds; each lands in `<outdir>/<app>`. */
export const apps = Object.keys(APPS);

/** Builds `only` (default both apps) into `<outdir>/<app>` (default web/dist) and returns `outdir`. */
export async function buildWeb(outdir = webDist, only = apps) {
  await Promise.all(only.map((app) => APPS[app](join(outdir, app))));
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [outdir, app] = process.argv.slice(2);
  if (app !== undefined && !apps.includes(app)) throw new Error(`unknown app ${app}: one of ${apps.join(', ')}`);
  await buildWeb(outdir || webDist, app ? [app] : apps);
}
