import type { ServerResponse } from 'node:http';
import { ApiError, type Deps, trpcContractError } from '@atrium/routers';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { DOCS_ASSETS, docsHandlers } from '../docs.ts';
import { landingPage } from '../landing.ts';
import { portalRoutes } from '../portal.ts';
import { applyHeaders, PAGE_SECURITY_HEADERS } from '../security.ts';
import { consoleRoutes } from './console.ts';
import { writeError } from './render.ts';

/** `/readyz`: the database answers a trivial query within 2 s. */
async function ready(deps: Deps, res: Response): Promise<void> {
  try {
    await Promise.race([
      deps.db.execute('select 1'),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2_000).unref()),
    ]);
    res.json({ status: 'ready', database: deps.driver });
  } catch {
    res.status(503).json({ code: 'service_unavailable', message: 'The database is not reachable.' });
  }
}

/**
 * The outer shell, for what is not a hot path: the landing page, health, readiness, the OpenAPI
 * document, the API reference, and the 404 of any other path. Its errors are the contract's JSON,
 * rendered as the REST codec renders them (render.ts `writeError`); `/metrics` is the pipeline's.
 */
export function pagesApp(
  deps: Deps,
  document: OpenAPIObject,
  baseUrl: string,
  assets: { console: string; portal?: string | undefined },
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    applyHeaders(res, PAGE_SECURITY_HEADERS);
    next();
  });
  app.get('/', landingPage);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => ready(deps, res));
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  const docs = docsHandlers(baseUrl);
  app.get('/docs', docs.page);
  app.get(`${DOCS_ASSETS}/init.js`, docs.init);
  app.get(`${DOCS_ASSETS}/standalone.js`, docs.standalone);
  // The self-serve admin portal (issue #23).
  app.use(portalRoutes(deps, assets.portal));
  app.use(consoleRoutes(deps, baseUrl, assets.console));
  app.use((_req, res) => {
    writeError(res, new ApiError(404, 'route_not_found', 'No such route.'));
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (trpcContractError(error).status >= 500) deps.log.error({ err: error }, 'unhandled error');
    writeError(res, error);
  });
  return app;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);

/**
 * A small HTML page for a browser that cannot be sent back to an app (a failed sign-in with no
 * known redirect URI, an invalid logout link): the title, the reason code and its message,
 * escaped, with the pages' security headers. Never a secret: callers pass reason codes only.
 */
export function writeErrorPage(
  res: ServerResponse,
  status: number,
  page: { title: string; reason: string; message: string },
): void {
  applyHeaders(res, PAGE_SECURITY_HEADERS);
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .25rem}</style>
</head><body><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p>
<p>Reason: <code>${escapeHtml(page.reason)}</code></p></body></html>
`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
