import type { Deps } from '@atrium/routers';
import type { Metrics } from '../metrics.ts';
import type { Exchange } from './exchange.ts';

/** Paths outside the API that are labelled by name in metrics (as `/trpc` is); the rest are `unmatched`. */
const NAMED_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']);

/** The label of metrics and logs: the route's template, `/trpc`, a named page, or `unmatched`. */
export function labelOf(template: string | undefined, trpc: boolean, pathname: string): string {
  if (template !== undefined) return template;
  if (trpc) return '/trpc';
  return NAMED_PATHS.has(pathname) ? pathname : 'unmatched';
}

/** When the response is finished: the request's metrics, and one access-log line if wanted. */
export function observe(deps: Deps, metrics: Metrics, accessLog: boolean, ex: Exchange, label: string): void {
  ex.res.on('finish', () => {
    const seconds = (performance.now() - ex.started) / 1000;
    const status = ex.res.statusCode;
    metrics.observe(ex.method, label, status, seconds, ex.shed);
    // The access log names the route and path (secret segments redacted), never headers, query strings or bodies.
    if (accessLog) {
      const line = {
        req_id: ex.requestId,
        method: ex.method,
        route: label,
        path: ex.logPath,
        status,
        ms: seconds * 1000,
      };
      deps.log.info(line, 'request');
    }
  });
}
