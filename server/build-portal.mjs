// Bundles the admin portal page (server/portal/main.tsx: the official @workos-inc/widgets,
// React and their styles) into `server/dist/portal/portal.{js,css}`, which the server serves at
// /portal/assets/ (no CDN). Run by build.mjs, so `npm start` (prestart) builds it too.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const portalDir = join(root, 'server', 'dist', 'portal');

/** Bundles the page into `outdir` (default `portalDir`); a test may build a copy of its own. */
export async function buildPortal(outdir = portalDir) {
  await build({
    entryPoints: { portal: join(root, 'server', 'portal', 'main.tsx') },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2020',
    jsx: 'automatic',
    minify: true,
    outdir,
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.woff': 'dataurl', '.woff2': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildPortal(process.argv[2]);
