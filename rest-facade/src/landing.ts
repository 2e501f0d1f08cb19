import express, { type Request, type Response, type Router } from 'express';
import { renderPage } from './pipeline/pages.ts';
import { applyHeaders, strictPageHeaders } from './security.ts';

/**
 * `GET /`: what a person who opens the server's URL finds, a plain page of links to the operator
 * console, the API reference and the health check. Static HTML with no script and no style, under
 * the strict page policy of the other pages.
 */
const PAGE = renderPage({
  title: 'Atrium',
  lang: 'en',
  body: `    <main>
      <h1>Atrium</h1>
      <p>A self-hosted organization layer that speaks the WorkOS API.</p>
      <ul>
        <li><a href="/console">Operator console</a>: sign in with the admin token the first start printed.</li>
        <li><a href="/docs">API reference</a> (and its <a href="/openapi.json">OpenAPI document</a>).</li>
        <li><a href="/healthz">Health check</a> (and <a href="/readyz">readiness</a>: the database answers).</li>
      </ul>
    </main>`,
});

const HEADERS = strictPageHeaders();

export function landingPage(_req: Request, res: Response): void {
  applyHeaders(res, HEADERS);
  res.setHeader('Cache-Control', 'no-cache');
  res.type('html').send(PAGE);
}

/** `GET /`, for the Express shell (pages.ts). */
export function landingRoutes(): Router {
  return express.Router().get('/', landingPage);
}
