import { type Exchange, writeHead } from './exchange.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { TRPC_BASE } from './trpc.ts';

/** What the official widgets send (WIDGETS-API.md §5): `Authorization` named, a `*` would not cover it. */
export const CORS_ALLOW_METHODS = 'GET, POST, PUT, DELETE';
export const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, WorkOS-Widgets-Version, WorkOS-Widgets-Type, x-elevated-access-token';
/** How long a browser may reuse a preflight (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_SECONDS = 600;
/** What an allowed preflight is answered with. */
const PREFLIGHT_HEADERS = [
  'Access-Control-Allow-Methods',
  CORS_ALLOW_METHODS,
  'Access-Control-Allow-Headers',
  CORS_ALLOW_HEADERS,
  'Access-Control-Max-Age',
  String(CORS_MAX_AGE_SECONDS),
];

/**
 * The browser-facing surfaces: `/_widgets/…`, `/client/graphql`, and tRPC calls that are all
 * `client.*`. Nothing else gets CORS headers: the API-key surfaces are for servers.
 */
export function isClientSurface(pathname: string): boolean {
  if (pathname.startsWith('/_widgets/') || pathname === GRAPHQL_PATH) return true;
  if (!pathname.startsWith(`${TRPC_BASE}/`)) return false;
  return pathname
    .slice(TRPC_BASE.length + 1)
    .split(',')
    .every((call) => call.startsWith('client.'));
}

/**
 * Hand-written, not the `cors` package (2.8.6, lib/index.js read): it treats every OPTIONS as a
 * preflight, where a bare OPTIONS must go on to routing; and for a disallowed origin it either
 * sets Allow-Methods/-Headers/-Max-Age on the preflight (a list of origins) or passes the
 * preflight on unanswered (an origin function), where this step answers 204 with no CORS headers
 * (tests/src/client-api/cors.http.test.ts): the wrapper would be longer than the step.
 *
 * The CORS step, before routing and authentication: on a client surface, an allowed `Origin`
 * (exact match) is echoed, never `*` and never with credentials (tokens travel as bearer headers);
 * a preflight is answered 204 here. A disallowed origin gets no CORS headers, so the browser
 * refuses. Returns true when it answered the request.
 */
export function corsStep(allowed: readonly string[]): (ex: Exchange) => boolean {
  const origins = new Set(allowed);
  return (ex) => {
    if (!isClientSurface(ex.pathname)) return false;
    const { res, req, answerHeaders } = ex;
    answerHeaders.push('Vary', 'Origin');
    const origin = req.headers.origin;
    const ok = typeof origin === 'string' && origins.has(origin);
    if (ok) answerHeaders.push('Access-Control-Allow-Origin', origin);
    if (ex.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return false;
    if (ok) answerHeaders.push(...PREFLIGHT_HEADERS);
    req.resume();
    writeHead(ex, 204, ['Content-Length', '0']);
    res.end();
    return true;
  };
}
