import type { OpenAPIObject } from 'trpc-to-openapi';
import { DOT_SEGMENT } from './path-params.ts';

interface Route {
  template: string;
  pattern: RegExp;
  methods: Set<string>;
}

/**
 * The route step: the REST surface's path table, compiled once from the OpenAPI document. It
 * tells an API path (for the pipeline) from everything else (for Express), and a wrong verb
 * (405) from an unknown path (404); its template labels metrics and logs.
 */
export class RouteTable {
  private readonly routes: Route[] = [];

  constructor(doc: OpenAPIObject) {
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
      this.routes.push({ template: path, pattern: new RegExp(`^${source}/?$`, 'i'), methods });
    }
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
