import { ApiError, type Deps, trpcContractError } from '@atrium/routers';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { applyHeaders, PAGE_SECURITY_HEADERS, PAGE_SECURITY_LIST } from '../security.ts';
import { consoleRoutes } from './console.ts';
import { type Answer, pushHeaders, writeAnswer } from './exchange.ts';
import { writeError } from './render.ts';

/**
 * An HTML page of the shell (the landing page, the API reference, the portal's pages and its
 * refusals), as its maker describes it; `renderPage` is the one renderer of them. Every value is
 * escaped here except `body`, which is markup its maker escaped (with `escapeHtml`).
 */
export interface Page {
  title: string;
  /** `lang` of the document (none when absent). */
  lang?: string;
  /** `<meta name content>` after charset and viewport, in order. */
  meta?: ReadonlyArray<readonly [name: string, content: string]>;
  stylesheets?: readonly string[];
  /** Scripts by URL (never inline: every page's CSP refuses inline script); `defer` puts them in head. */
  scripts?: ReadonlyArray<{ src: string; defer?: boolean }>;
  body: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or an attribute value, escaped for HTML. */
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** The page's document. */
export function renderPage(page: Page): string {
  const head = [
    '<meta charset="utf-8" />',
    '<meta name="viewport" content="width=device-width, initial-scale=1" />',
    `<title>${escapeHtml(page.title)}</title>`,
    ...(page.meta ?? []).map(
      ([name, content]) => `<meta name="${escapeHtml(name)}" content="${escapeHtml(content)}" />`,
    ),
    ...(page.stylesheets ?? []).map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}" />`),
    ...(page.scripts ?? []).flatMap((s) => (s.defer ? [`<script src="${escapeHtml(s.src)}" defer></script>`] : [])),
  ];
  const tail = (page.scripts ?? []).flatMap((s) => (s.defer ? [] : [`<script src="${escapeHtml(s.src)}"></script>`]));
  const lang = page.lang ? ` lang="${escapeHtml(page.lang)}"` : '';
  return `<!doctype html>
<html${lang}>
  <head>
${head.map((line) => `    ${line}`).join('\n')}
  </head>
  <body>
${[page.body, ...tail.map((line) => `    ${line}`)].join('\n')}
  </body>
</html>
`;
}

/** Sends a page with its status (the caller has set its headers). */
export function sendPage(res: Response, status: number, page: Page): void {
  res.status(status).type('html').send(renderPage(page));
}

/** A readable refusal (a link or session that cannot be used): its heading and one paragraph. */
export function refusalPage(heading: string, text: string, stylesheets: readonly string[] = []): Page {
  return {
    title: heading,
    lang: 'en',
    stylesheets,
    body: `    <main class="portal-message"><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(text)}</p></main>`,
  };
}

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
 * The outer shell, for what is not a hot path: health, readiness, the OpenAPI document, the
 * surfaces' pages (`surfaces`: the landing page, the API reference, the admin portal, each
 * rendering through `renderPage`; passed in, since they import this file), the console, and the
 * 404 of any other path. Its errors are the contract's JSON, rendered as the REST codec renders
 * them (render.ts `writeError`); `/metrics` is the pipeline's.
 */
export function pagesApp(
  deps: Deps,
  document: OpenAPIObject,
  baseUrl: string,
  assets: { console: string },
  surfaces: readonly express.Router[] = [],
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    applyHeaders(res, PAGE_SECURITY_HEADERS);
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => ready(deps, res));
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  for (const routes of surfaces) app.use(routes);
  app.use(consoleRoutes(deps, baseUrl, assets.console));
  app.use((_req, res) => {
    writeError({ res }, new ApiError(404, 'route_not_found', 'No such route.'));
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (trpcContractError(error).status >= 500) deps.log.error({ err: error }, 'unhandled error');
    writeError({ res }, error);
  });
  return app;
}

/** An error page's headers: the pages' security headers, its own policy (inline styles only) and type. */
const ERROR_PAGE_HEADERS = [
  ...PAGE_SECURITY_LIST,
  'Content-Security-Policy',
  "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'Content-Type',
  'text/html; charset=utf-8',
];

/**
 * A small HTML page for a browser that cannot be sent back to an app (a failed sign-in with no
 * known redirect URI, an invalid logout link): the title, the reason code and its message,
 * escaped, with the pages' security headers. Never a secret: callers pass reason codes only.
 */
export function writeErrorPage(
  to: Answer,
  status: number,
  page: { title: string; reason: string; message: string },
  headers?: Record<string, string>,
): void {
  const body = renderPage({
    title: page.title,
    lang: 'en',
    body: [
      `    <h1>${escapeHtml(page.title)}</h1>`,
      `    <p>${escapeHtml(page.message)}</p>`,
      `    <p>Reason: <code>${escapeHtml(page.reason)}</code></p>`,
    ].join('\n'),
  });
  const own: (string | number)[] = [];
  pushHeaders(own, headers);
  own.push(...ERROR_PAGE_HEADERS);
  writeAnswer(to, status, own, body);
}
