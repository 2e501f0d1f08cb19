import type { Meta, ProcedureEntry } from '@atrium/routers';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import {
  getInputOutputParsers,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  type OpenApiProcedure,
  unwrapZodType,
} from 'trpc-to-openapi';
import type { ZodObject, ZodRawShape } from 'zod';
import { decodeSegment, normalisedPath } from './path-params.ts';

/** What a secret path segment is logged as. */
export const REDACTED_SEGMENT = '[redacted]';

/** The methods REST operations use, in the order an `Allow` header lists them. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** One REST operation: its procedure, its template, its success status and how its input is read. */
export interface RestRoute {
  entry: ProcedureEntry;
  method: string;
  /** The OpenAPI path template (`/organizations/{id}`): the label of metrics and logs. */
  template: string;
  status: number;
  /** Each `{param}` of the template and the index of its segment in the path. */
  params: ReadonlyArray<{ name: string; index: number }>;
  /** The segments logged as `[redacted]` (`meta.secretPathParams`). */
  secretSegments: readonly number[];
  /** The JSON body is read: a POST, PUT or PATCH, or a DELETE marked `bodyOnDelete`. */
  readsBody: boolean;
  /** A POST that takes its input from the query (`meta.queryInput`). */
  queryInput: boolean;
  /** The input's object schema (unwrapped as trpc-to-openapi unwraps it), if it is one. */
  schema: ZodObject<ZodRawShape> | undefined;
  /** No input at all (`z.void()`): the procedure gets undefined. */
  voidInput: boolean;
  /** Query keys whose schema is an array: a single value becomes a list of one. */
  arrayKeys: readonly string[];
  /** Its schema's numbers, booleans and dates coerce from strings (turned on at its first call). */
  coerced: boolean;
}

/** What the table answers for a method and path. */
export type RouteMatch =
  | { kind: 'match'; template: string; route: RestRoute; params: Record<string, string> }
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

/** A route the table matched: its template, the route and its decoded path parameters. */
export type MatchedRoute = Extract<RouteMatch, { kind: 'match' }>;

const NONE: RouteMatch = { kind: 'none' };

type SchemaDef = { _zod?: { def?: { type?: string; innerType?: SchemaDef } } };

/** An array, or an optional array (the two a single query value is wrapped for). */
const isArraySchema = (schema: SchemaDef | undefined): boolean => {
  const def = schema?._zod?.def;
  return def?.type === 'array' || (def?.type === 'optional' && def.innerType?._zod?.def?.type === 'array');
};

function routeOf(entry: ProcedureEntry, meta: Meta & { openapi: NonNullable<Meta['openapi']> }): RestRoute {
  const { method, path: template } = meta.openapi;
  const { inputParser } = getInputOutputParsers(entry.procedure as unknown as OpenApiProcedure);
  const unwrapped = unwrapZodType(inputParser, true);
  const schema = instanceofZodTypeObject(unwrapped) ? unwrapped : undefined;
  const segments = template.split('/');
  const params = segments.flatMap((segment, index) =>
    /^\{.+\}$/.test(segment) ? [{ name: segment.slice(1, -1), index }] : [],
  );
  const secrets = meta.secretPathParams ?? [];
  return {
    entry,
    method,
    template,
    status: meta.successStatus ?? 200,
    params,
    secretSegments: params.filter((p) => secrets.includes(p.name)).map((p) => p.index),
    readsBody:
      method === 'POST' || method === 'PUT' || method === 'PATCH' || (method === 'DELETE' && !!meta.bodyOnDelete),
    queryInput: meta.queryInput === true,
    schema,
    voidInput: instanceofZodTypeLikeVoid(unwrapped),
    arrayKeys: schema ? Object.keys(schema.shape).filter((key) => isArraySchema(schema.shape[key] as SchemaDef)) : [],
    coerced: false,
  };
}

/** A template as find-my-way writes it: `{id}` becomes `:id`. */
const fmwPath = (template: string) => template.replace(/\{([^}]+)\}/g, ':$1');

/** The operations at one path shape (`/organizations/{}`), by method. */
interface Shape {
  byMethod: Record<string, RestRoute | undefined>;
  /** The segments logged as `[redacted]`, whatever the method (a wrong verb logs its path too). */
  secretSegments: readonly number[];
}

const routerOptions = { caseSensitive: false, maxParamLength: Number.MAX_SAFE_INTEGER };

/**
 * The route step: the REST surface's one route table, built from the procedures' `meta.openapi`
 * into find-my-way's radix trees (Fastify's router). It tells an API path (for the pipeline) from
 * everything else (for Express), and a wrong verb (405) from an unknown path (404); a match
 * carries the operation itself, so the dispatcher runs it without a second lookup.
 *
 * One tree holds every path shape, so most requests cost one lookup, shared by `redact` and
 * `match`; one tree per method answers the rare rest (a shape without the verb, where another
 * shape may have it: `POST /organizations/external_id/groups`).
 *
 * Paths are matched as path-params.ts normalises them (dot segments name nothing, a trailing
 * slash is ignored, case too, as trpc-to-openapi matched), and find-my-way is handed a key
 * without `%`: an escaped segment matches a parameter only, and each parameter is cut from
 * the normalised path and decoded here (an encoded `/` stays inside its segment; a malformed
 * escape is left as sent), not by find-my-way, which would refuse the whole path.
 */
export class RouteTable {
  private readonly shapes = FindMyWay(routerOptions);
  private readonly byMethod = FindMyWay(routerOptions);
  private readonly methods: HTTPMethod[] = [];
  private readonly byProcedure = new Map<string, RestRoute>();
  /** The last path looked up (`redact` then `match` ask for the same one). */
  private lastPathname: string | undefined;
  private lastPath: string | undefined;
  private lastShape: Shape | undefined;

  constructor(entries: readonly ProcedureEntry[]) {
    const shapes = new Map<string, Shape>();
    for (const entry of entries) {
      const meta = entry.meta;
      if (!meta?.openapi || meta.openapi.enabled === false || entry.type === 'subscription') continue;
      const route = routeOf(entry, meta as Meta & { openapi: NonNullable<Meta['openapi']> });
      const method = route.method as HTTPMethod;
      // The first procedure declared for a method and template serves it, as trpc-to-openapi chose.
      if (this.byMethod.hasRoute(method, fmwPath(route.template))) continue;
      this.byMethod.on(method, fmwPath(route.template), () => {}, route);
      if (!this.methods.includes(method)) this.methods.push(method);
      this.byProcedure.set(entry.path, route);
      let index = 0;
      const shapePath = route.template.replace(/\{[^}]+\}/g, () => `:p${index++}`);
      let shape = shapes.get(shapePath);
      if (!shape) {
        shape = { byMethod: Object.create(null), secretSegments: [] };
        shapes.set(shapePath, shape);
        this.shapes.on('GET', shapePath, () => {}, shape);
      }
      shape.byMethod[method] ??= route;
      if (route.secretSegments.length > 0) shape.secretSegments = route.secretSegments;
    }
    this.methods.sort((a, b) => METHODS.indexOf(a as never) - METHODS.indexOf(b as never));
  }

  /** The route a procedure is served at (`organizations.delete`), if it has one. */
  routeOf(procedurePath: string): RestRoute | undefined {
    return this.byProcedure.get(procedurePath);
  }

  /** The normalised path and its shape, if any; remembered for the next call. */
  private lookup(pathname: string): Shape | undefined {
    if (pathname !== this.lastPathname) {
      this.lastPathname = pathname;
      this.lastPath = normalisedPath(pathname);
      this.lastShape =
        this.lastPath === undefined ? undefined : (this.shapes.find('GET', keyOf(this.lastPath))?.store as Shape);
    }
    return this.lastShape;
  }

  /**
   * The path as logs and traces may show it: on a route with secret segments (an invitation's
   * token), those segments replaced by `[redacted]`, whatever the method. The path is kept as
   * sent when its segments are the matched ones, else the normalised path is shown.
   */
  redact(pathname: string): string {
    const shape = this.lookup(pathname);
    if (!shape || shape.secretSegments.length === 0) return pathname;
    const matched = (this.lastPath as string).split('/');
    const sent = pathname.split('/');
    const segments = sent.length - (pathname.endsWith('/') ? 1 : 0) === matched.length ? sent : matched;
    for (const i of shape.secretSegments) segments[i] = REDACTED_SEGMENT;
    return segments.join('/');
  }

  /**
   * `match` (the route, its template and its decoded parameters) when the verb and path are
   * served, `method` (with the verbs that are) when only the path is, else `none`.
   */
  match(method: string, pathname: string): RouteMatch {
    const shape = this.lookup(pathname);
    if (!shape) return NONE;
    const path = this.lastPath as string;
    const route = shape.byMethod[method] ?? this.otherShape(method, path);
    if (route) return { kind: 'match', template: route.template, route, params: paramsOf(route, path) };
    const key = keyOf(path);
    const allow = this.methods.filter((other) => this.byMethod.find(other, key) !== null);
    return { kind: 'method', allow };
  }

  /** The route of another shape that has the method, when the first shape found has not. */
  private otherShape(method: string, path: string): RestRoute | undefined {
    if (!this.methods.includes(method as HTTPMethod)) return undefined;
    return this.byMethod.find(method as HTTPMethod, keyOf(path))?.store as RestRoute | undefined;
  }
}

/** The key find-my-way matches: no `%`, so it decodes nothing and refuses nothing. */
function keyOf(path: string): string {
  return path.includes('%') ? path.replaceAll('%', '~') : path;
}

/** The route's `{param}` values, cut from the normalised path and percent-decoded. */
function paramsOf(route: RestRoute, path: string): Record<string, string> {
  const params: Record<string, string> = {};
  if (route.params.length === 0) return params;
  const segments = path.split('/');
  const decode = path.includes('%');
  for (const { name, index } of route.params) {
    const raw = segments[index] ?? '';
    params[name] = decode ? (decodeSegment(raw) ?? raw) : raw;
  }
  return params;
}
