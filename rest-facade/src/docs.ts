import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import { renderPage } from './pipeline/pages.ts';
import { applyHeaders, strictPageHeaders } from './security.ts';

/**
 * The API reference at /docs, served wholly by this process so it works offline: the page, a
 * small init script, and Scalar's standalone bundle from the installed `@scalar/api-reference`.
 * The bundle's URL carries the package version, so it can be cached for a year.
 */
const require = createRequire(import.meta.url);
const SCALAR_DIST = dirname(require.resolve('@scalar/api-reference'));
const SCALAR_VERSION: string = JSON.parse(readFileSync(join(SCALAR_DIST, '..', 'package.json'), 'utf8')).version;
const STANDALONE = join(SCALAR_DIST, 'browser', 'standalone.js');

export const DOCS_ASSETS = `/docs/assets/${SCALAR_VERSION}`;
const YEAR_MS = 365 * 24 * 3600 * 1000;

// Nothing leaves the machine: no default fonts (Scalar's CDN), no telemetry, no "Ask AI" agent
// and no "Generate MCP" (both send the document to Scalar's servers, and the CSP refuses them),
// no developer toolbar (its "Share" uploads the document). Scalar shows the last three on
// loopback URLs unless they are disabled (@scalar/api-reference 1.72 ApiReference.vue).
const SCALAR_CONFIG = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
};

const PAGE = renderPage({
  title: 'Atrium API reference',
  body: '    <div id="app"></div>',
  scripts: [{ src: `${DOCS_ASSETS}/standalone.js` }, { src: `${DOCS_ASSETS}/init.js` }],
});
const INIT = `Scalar.createApiReference('#app', ${JSON.stringify(SCALAR_CONFIG)});\n`;

/**
 * Scripts only from this origin (the init script is a file, not inline); Scalar (Vue) sets
 * inline styles, so styles may be inline. Requests go to this origin and to the public URL the
 * OpenAPI document names (the "test request" client). No `upgrade-insecure-requests`: the
 * server usually runs on plain http on loopback.
 */
function docsHeaders(baseUrl: string) {
  const api = new URL(baseUrl).origin;
  return strictPageHeaders({ inlineStyles: true, fonts: true, blobs: true, connect: [api], baseSelf: true });
}

export interface DocsHandlers {
  page: (req: Request, res: Response) => void;
  init: (req: Request, res: Response) => void;
  standalone: (req: Request, res: Response, next: (err?: unknown) => void) => void;
}

export function docsHandlers(baseUrl: string): DocsHandlers {
  const headers = docsHeaders(baseUrl);
  return {
    page: (_req, res) => {
      applyHeaders(res, headers);
      res.setHeader('Cache-Control', 'no-cache');
      res.type('html').send(PAGE);
    },
    init: (_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.type('text/javascript').send(INIT);
    },
    standalone: (_req, res, next) => {
      res.type('text/javascript');
      res.sendFile(STANDALONE, { maxAge: YEAR_MS, immutable: true }, (err) => {
        if (err && !res.headersSent) next(err);
      });
    },
  };
}

/** The API reference's routes, for the Express shell (pages.ts). */
export function docsRoutes(baseUrl: string): Router {
  const docs = docsHandlers(baseUrl);
  const routes = express.Router();
  routes.get('/docs', docs.page);
  routes.get(`${DOCS_ASSETS}/init.js`, docs.init);
  routes.get(`${DOCS_ASSETS}/standalone.js`, docs.standalone);
  return routes;
}
