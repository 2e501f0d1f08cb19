import type { OpenAPIObject } from 'trpc-to-openapi';
import { DOT_SEGMENT } from './path-params.ts';

interface Route {
  template: string;
  pattern: RegExp;
  methods: Set<string>;
}

/** What a secret path segment is logged as. */
export const REDACTED_SEGMENT = '[redacted]';

/**
 * The route step: the REST surface's path table, compiled once from the OpenAPI document. It
 * tells an API path (for the pipeline) from everything else (for Express), and a wrong verb
 * (405) from an unknown path (404); its template labels metrics and logs.
 */
export class RouteTable {
  private readonly routes: Route[] = [];
  /** Routes with secret path parameters, and the indices of their segments. */
  private readonly secrets: Array<{ pattern: RegExp; indices: number[] }> = [];

  /** `secrets`: the secret path parameters of each template (`meta.secretPathParams`). */
  constructor(doc: OpenAPIObject, secrets: ReadonlyMap<string, readonly string[]> = new Map()) {
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const source = path
        .split('/')
        .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      const methods = new Set(
        Object.keys(item)
          .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
          .map((key) => key.toUpperCase()),
      );
      const pattern = new RegExp(`^${source}/?$`, 'i');
      this.routes.push({ template: path, pattern, methods });
      const names = secrets.get(path);
      if (names) {
        const indices = path.split('/').flatMap((segment, i) => (names.includes(segment.slice(1, -1)) ? [i] : []));
        this.secrets.push({ pattern, indices });
      }
    }
  }

  /**
   * The path as logs and traces may show it: the segments that are secrets (an invitation's
   * token) replaced by `[redacted]`, whatever the method (a wrong verb logs the path too).
   */
  redact(pathname: string): string {
    for (const { pattern, indices } of this.secrets) {
      if (!pattern.test(pathname)) continue;
      const segments = pathname.split('/');
      for (const i of indices) segments[i] = REDACTED_SEGMENT;
      return segments.join('/');
    }
    return pathname;
  }

  /**
   * `match` (with the path template, the label of metrics and logs) when the verb and path are
   * served, `method` when only the path is, else `none`.
   */
  match(
    method: string,
    pathname: string,
  ): { kind: 'match'; template: string } | { kind: 'method'; allow: string[] } | { kind: 'none' } {
    if (DOT_SEGMENT.test(pathname)) return { kind: 'none' };
    const allow = new Set<string>();
    for (const route of this.routes) {
      if (!route.pattern.test(pathname)) continue;
      if (route.methods.has(method)) return { kind: 'match', template: route.template };
      for (const m of route.methods) allow.add(m);
    }
    return allow.size > 0 ? { kind: 'method', allow: [...allow] } : { kind: 'none' };
  }
}
