import {
  ApiError,
  apiErrorOf,
  authenticateDirectoryToken,
  callProcedure,
  type Deps,
  type DirectoryCaller,
  directoryTokenRefused,
  type ProcedureEntry,
  procedureEntries,
  SCIM_ERROR_SCHEMA,
  SCIM_ROUTES,
  type ScimRoute,
  scimRouter,
  scimStatusOf,
  scimTypeOf,
} from '@atrium/routers';
import { directoryOf, type Identity } from './authenticate.ts';
import { parseQuery } from './body.ts';
import { type Exchange, pushHeaders, writeAnswer } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import { decodeSegment } from './path-params.ts';
import type { Call, Codec } from './pipeline.ts';
import type { Cost } from './rate-limit.ts';
import { responseTooLarge } from './render.ts';

/** Where each directory's SCIM base URL starts: `/scim/v2/<directory_id>` (directories/service.ts `scimBaseUrl`). */
export const SCIM_PREFIX = '/scim/v2';

export function isScimPath(pathname: string): boolean {
  return (
    pathname.startsWith(SCIM_PREFIX) && (pathname.length === SCIM_PREFIX.length || pathname[SCIM_PREFIX.length] === '/')
  );
}

/** Every SCIM response's content type (RFC 7644 §3.1). */
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** A SCIM request: its route, procedure, the path's directory and id, and its query. */
export interface ScimRequest extends Call {
  route: ScimRoute;
  entry: ProcedureEntry;
  directoryId: string;
  id: string | undefined;
  query: Record<string, string>;
  /** The token's directory, once the credential step verified it names the path's. */
  directory?: DirectoryCaller | undefined;
}

// What a SCIM call costs, shared rather than made per request.
const ONE_REQUEST: Cost = { requests: 1, organizationDeletes: 0 };

/** The resource types of the SCIM surface, by lower-cased name (endpoints are matched in any case). */
const RESOURCES = new Map(
  ['Users', 'Groups', 'ServiceProviderConfig', 'ResourceTypes', 'Schemas'].map((name) => [name.toLowerCase(), name]),
);

const scimNotFound = (detail: string) => new ApiError(404, 'scim_404', detail);

/** The routes by shape (`/Users/{id}`), by method. */
function routeTable(): Map<string, Map<string, { route: ScimRoute; entry: ProcedureEntry }>> {
  const entries = new Map(procedureEntries(scimRouter).map((entry) => [entry.path, entry]));
  const table = new Map<string, Map<string, { route: ScimRoute; entry: ProcedureEntry }>>();
  for (const route of SCIM_ROUTES) {
    const entry = entries.get(route.procedure);
    if (!entry)
      throw new Error(`The SCIM route ${route.method} ${route.path} names no procedure '${route.procedure}'.`);
    const byMethod = table.get(route.path) ?? new Map();
    byMethod.set(route.method, { route, entry });
    table.set(route.path, byMethod);
  }
  return table;
}

/** The first value of each query key (a repeated key keeps its first). */
function queryOf(search: string): Record<string, string> {
  const query: Record<string, string> = {};
  const parsed = parseQuery(search);
  for (const key in parsed) {
    const value = parsed[key];
    query[key] = Array.isArray(value) ? (value[0] ?? '') : (value as string);
  }
  return query;
}

/** A header's single value. */
function headerOf(ex: Exchange, name: string): string | undefined {
  const value = ex.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** RFC 7644 §3.12's error body, as every SCIM refusal is answered. */
function scimErrorBody(error: unknown): { status: number; body: string; api: ApiError } {
  const api = apiErrorOf(error) ?? new ApiError(500, 'server_error', 'An unexpected error occurred.');
  const status = scimStatusOf(api);
  const scimType = scimTypeOf(api);
  const body = JSON.stringify({
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(status),
    ...(scimType ? { scimType } : {}),
    detail: api.message,
  });
  return { status, body, api };
}

function writeScim(ex: Exchange, status: number, body: string | undefined, headers?: Record<string, string>): void {
  const own: (string | number)[] = [];
  pushHeaders(own, headers);
  if (body !== undefined) own.push('Content-Type', SCIM_CONTENT_TYPE);
  writeAnswer(ex, status, own, body);
}

/**
 * The SCIM codec (RFC 7644) at `/scim/v2/<directory_id>/…`: a call is a route of the SCIM surface
 * (routers/src/scim/router.ts) with the path's directory and id, its query, its JSON body
 * (`application/scim+json` or `application/json`) and its `If-Match`; it needs that directory's
 * SCIM token, checked before the body is read (another directory's token is 401, as an unknown
 * one). Outcomes and every refusal are `application/scim+json`, errors in SCIM's shape with its
 * `scimType`; `ETag` goes out as a header, a `GET` whose `If-None-Match` names it answers 304, a
 * create carries `Location`.
 */
export function scimCodec(deps: Deps, maxResponseBytes: number): Codec<ScimRequest, unknown> {
  const table = routeTable();
  return {
    surface: 'scim',
    decode(ex) {
      const rest = ex.pathname.slice(SCIM_PREFIX.length).replace(/^\/+|\/+$/g, '');
      const segments = rest === '' ? [] : rest.split('/').map((s) => decodeSegment(s) ?? s);
      const [directoryId, resource, id, ...more] = segments;
      const name = resource === undefined ? undefined : RESOURCES.get(resource.toLowerCase());
      if (!directoryId || !name || more.length > 0 || (id !== undefined && id === '')) {
        throw scimNotFound(`No SCIM endpoint at '${ex.pathname.slice(0, 200)}'.`);
      }
      const shape = id === undefined ? `/${name}` : `/${name}/{id}`;
      const byMethod = table.get(shape);
      if (!byMethod) throw scimNotFound(`No SCIM endpoint at '${ex.pathname.slice(0, 200)}'.`);
      const found = byMethod.get(ex.method === 'HEAD' ? 'GET' : ex.method);
      if (!found) {
        const allow = [...byMethod.keys()].join(', ');
        throw new ApiError(405, 'scim_405', `${ex.method} is not allowed here.`, undefined, undefined, { allow });
      }
      const query = queryOf(ex.search);
      const reads = found.route.method === 'POST' || found.route.method === 'PUT' || found.route.method === 'PATCH';
      return {
        cost: ONE_REQUEST,
        reads: reads ? 'json' : undefined,
        weight: weightOfPage(query.count),
        calls: 1,
        route: found.route,
        entry: found.entry,
        directoryId,
        id,
        query,
      };
    },
    credential(ex, call, identity: Identity | undefined) {
      const known = directoryOf(identity);
      if (known) {
        if (known.principal.directoryId !== call.directoryId) return Promise.resolve(directoryTokenRefused());
        call.directory = known;
        return undefined;
      }
      return authenticateDirectoryToken(deps, ex.req.headers.authorization, call.directoryId).then(
        (caller) => {
          call.directory = caller;
          return undefined;
        },
        (error: unknown) => {
          if (error instanceof ApiError) return error;
          throw error;
        },
      );
    },
    dispatch(ex, call, ctx) {
      ctx.directory = call.directory;
      // Absent keys stay absent (assigned, not spread: tests/src/patches/v8-promotion.test.ts).
      const input: Record<string, unknown> = { directoryId: call.directoryId, query: call.query };
      if (call.id !== undefined) input.id = call.id;
      if (call.body !== undefined) input.body = call.body;
      const ifMatch = headerOf(ex, 'if-match');
      if (ifMatch !== undefined) input.ifMatch = ifMatch;
      return callProcedure(call.entry, ctx, input);
    },
    encode(ex, call, result, ctx) {
      const headers: Record<string, string> = { ...ctx.responseHeaders };
      const etag = headers.ETag;
      if (ex.method === 'GET' && etag !== undefined && headerOf(ex, 'if-none-match') === etag) {
        return writeScim(ex, 304, undefined, headers);
      }
      if (result === undefined) return writeScim(ex, 204, undefined, headers);
      const body = JSON.stringify(result);
      if (body.length * 3 > maxResponseBytes && Buffer.byteLength(body) > maxResponseBytes) {
        const refused = scimErrorBody(responseTooLarge(maxResponseBytes));
        return writeScim(ex, refused.status, refused.body);
      }
      const location = (result as { meta?: { location?: unknown } }).meta?.location;
      if (call.route.status === 201 && typeof location === 'string') headers.Location = location;
      writeScim(ex, call.route.status, ex.method === 'HEAD' ? undefined : body, headers);
    },
    encodeError(ex, error, headers) {
      const { status, body, api } = scimErrorBody(error);
      const extra: Record<string, string> = { ...headers };
      const allow = api.detail?.allow;
      if (typeof allow === 'string') extra.Allow = allow;
      if (api.retryAfterSeconds !== undefined) extra['Retry-After'] = String(api.retryAfterSeconds);
      if (status === 401) extra['WWW-Authenticate'] = 'Bearer realm="SCIM"';
      writeScim(ex, status, body, extra);
    },
  };
}
