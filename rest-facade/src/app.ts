import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  ApiError,
  appRouter,
  asTRPCError,
  authenticateAdmin,
  contractError,
  createInnerContext,
  type Deps,
  jwksOfClient,
} from '@atrium/routers';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { MAX_BODY_BYTES, parseQuery, readJsonBody } from './body.ts';
import { DOCS_ASSETS, docsHandlers } from './docs.ts';
import { DEFAULT_IN_FLIGHT, InFlightLimit, type InFlightOptions, weightOfPage } from './in-flight.ts';
import { Metrics } from './metrics.ts';
import { buildOpenApiDocument, restRouteOf, successStatuses } from './openapi.ts';
import { decodeSegment, decodingCaller, type PathParams, pathParamsOf } from './path-params.ts';
import { DEFAULT_RATE_LIMITS, type RateLimitOptions, RateLimits } from './rate-limit.ts';
import { boundResponse, MAX_BATCH_CALLS, MAX_RESPONSE_BYTES } from './response-limit.ts';
import { RouteTable } from './routes.ts';
import { API_SECURITY_HEADERS, applyHeaders, PAGE_SECURITY_HEADERS } from './security.ts';

type ApiRequest = IncomingMessage & {
  body?: unknown;
  query?: unknown;
  requestId?: string;
  /** The request's percent-encoded path parameters and their decodings (see path-params.ts). */
  pathParams?: PathParams;
  /** Refused a turn by the in-flight limit (its 503 is not the database's). */
  shed?: boolean;
};

const JWKS_TEMPLATE = '/sso/jwks/{clientId}';

/** Where tRPC clients call the procedures (`/trpc/organizations.create`, batches `a,b?batch=1`). */
const TRPC_BASE = '/trpc';

/** The procedure whose calls count against the organization-delete limit as well, over tRPC and REST. */
const ORGANIZATION_DELETE = 'organizations.delete';
const ORGANIZATION_DELETE_ROUTE = restRouteOf(ORGANIZATION_DELETE);

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

const batchTooLarge = (message: string) => new ApiError(400, 'batch_too_large', message);

/** Echo a caller's X-Request-ID when it is sane, else make one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

export function sendError(res: ServerResponse, error: unknown, extraHeaders: Record<string, string> = {}): void {
  const { status, body } = contractError(error);
  const payload = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value);
  res.end(payload);
}

/** The JWKS documents as sent, serialised once per cached key set (see `serveJwks`). */
const serialisedJwks = new WeakMap<object, string>();

/** Does an `If-None-Match` header name the response's ETag (or `*`)? Weak comparison. */
function etagMatches(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch).split(',').map(strip);
  return wanted.includes('*') || wanted.includes(strip(etag));
}

export interface AtriumApp {
  /** The node:http listener: API paths go straight to the OpenAPI bridge, the rest to Express. */
  handler: RequestListener;
  express: express.Express;
  /** Prometheus metrics served at `/metrics`; workers register their gauges here. */
  metrics: Metrics;
  /** The per-API-key limits, or undefined when turned off. */
  limits: RateLimits | undefined;
  /** The limit on requests running at once, or undefined when turned off. */
  inFlight: InFlightLimit | undefined;
}

export interface AppOptions {
  /** Public base URL, used in the OpenAPI document. */
  baseUrl: string;
  /**
   * Limits per API key (defaults: 6,000 requests and 50 organization deletes per 60 s) and per
   * client address without valid credentials (300); false turns them off.
   */
  rateLimit?: Partial<RateLimitOptions> | false;
  /** The most bytes one response body may hold (default 16 MiB). */
  maxResponseBytes?: number;
  /** The metrics registry to fill (default: a new one without process metrics). */
  metrics?: Metrics;
  /** One `info` line per request (default true); off saves a write per request. */
  accessLog?: boolean;
  /** Requests running at once, waiting, and how long they wait (see in-flight.ts); false turns it off. */
  inFlight?: Partial<InFlightOptions> | false;
}

/** Paths outside the API that are labelled by name in metrics (as `/trpc` is); the rest are `unmatched`. */
const NAMED_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']);

function isTrpcPath(pathname: string): boolean {
  return pathname.startsWith(TRPC_BASE) && (pathname.length === TRPC_BASE.length || pathname[TRPC_BASE.length] === '/');
}

/** A refusal of a whole `/trpc` response in tRPC's shape: one error per call of a batch, else one. */
function trpcErrorBody(pathname: string, search: string): (error: ApiError) => string {
  return (error) => {
    const paths = pathname.slice(TRPC_BASE.length + 1).split(',');
    const config = appRouter._def._config;
    const shape = (path: string) => ({
      error: getErrorShape({
        config,
        error: asTRPCError(error),
        type: 'unknown',
        path,
        input: undefined,
        ctx: undefined,
      }),
    });
    const batch = new URLSearchParams(search).get('batch') === '1';
    return JSON.stringify(batch ? paths.map(shape) : shape(paths[0] ?? ''));
  };
}

/** The raw `Idempotency-Key` header, for the procedures' idempotency step (routers/src/idempotency). */
function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const value = req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The REST facade. The WorkOS paths are served by trpc-to-openapi's node-http handler ahead of
 * Express (Express's router costs a third of the throughput per the stack notes); request ids,
 * bodies, queries and errors are handled here so that every path answers the contract's way.
 */
export function createApp(deps: Deps, options: AppOptions): AtriumApp {
  const document = buildOpenApiDocument(options.baseUrl);
  const routes = new RouteTable(document);
  const statuses = successStatuses();
  const metrics = options.metrics ?? new Metrics();
  const accessLog = options.accessLog ?? true;
  const limits =
    options.rateLimit === false
      ? undefined
      : new RateLimits(deps, Object.assign({}, DEFAULT_RATE_LIMITS, options.rateLimit));
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const inFlight =
    options.inFlight === false
      ? undefined
      : new InFlightLimit(Object.assign({}, DEFAULT_IN_FLIGHT, options.inFlight), (reason) =>
          metrics.shed.inc({ reason }),
        );
  if (inFlight) metrics.registerInFlight(() => inFlight.load);

  // The bridge builds its caller with `router.createCaller(ctx)`: the caller it gets decodes the
  // request's path parameters, which the bridge leaves percent-encoded.
  const pathParamsOfContext = new WeakMap<object, PathParams>();
  const bridgeRouter: typeof appRouter = {
    ...appRouter,
    createCaller: ((ctx: object, ...rest: unknown[]) => {
      const caller = (appRouter.createCaller as (...a: unknown[]) => object)(ctx, ...rest);
      const params = pathParamsOfContext.get(ctx);
      return params ? decodingCaller(caller, params) : caller;
    }) as typeof appRouter.createCaller,
  };
  const bridge = createOpenApiNodeHttpHandler({
    router: bridgeRouter,
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => {
      const ctx = createInnerContext(
        deps,
        req.headers.authorization,
        (req as ApiRequest).requestId,
        idempotencyKeyOf(req),
      );
      const params = (req as ApiRequest).pathParams;
      if (params && params.size > 0) pathParamsOfContext.set(ctx, params);
      return ctx;
    },
    responseMeta: ({ ctx, paths, errors }) => {
      const headers = ctx?.responseHeaders;
      if (errors.length > 0) return { status: contractError(errors[0]).status, headers };
      const status = paths?.[0] ? statuses.get(paths[0]) : undefined;
      return status ? { status, headers } : { headers };
    },
    onError: ({ error, path }) => {
      const { status } = contractError(error);
      if (status >= 500) deps.log.error({ err: error.cause ?? error, path }, 'request failed');
    },
  });

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
  app.get('/readyz', async (_req, res) => {
    try {
      await Promise.race([
        deps.db.execute('select 1'),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2_000).unref()),
      ]);
      res.json({ status: 'ready', database: deps.driver });
    } catch {
      res.status(503).json({ code: 'service_unavailable', message: 'The database is not reachable.' });
    }
  });
  // Prometheus metrics, behind the admin token (a scraper sends it as a bearer token).
  app.get('/metrics', async (req, res) => {
    await authenticateAdmin(deps, req.headers.authorization);
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  const docs = docsHandlers(options.baseUrl);
  app.get('/docs', docs.page);
  app.get(`${DOCS_ASSETS}/init.js`, docs.init);
  app.get(`${DOCS_ASSETS}/standalone.js`, docs.standalone);
  app.use((_req, res) => {
    sendError(res, new ApiError(404, 'route_not_found', 'No such route.'));
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (contractError(error).status >= 500) deps.log.error({ err: error }, 'unhandled error');
    sendError(res, error);
  });

  /**
   * tRPC clients, served by tRPC's node-http handler ahead of Express as the REST paths are
   * (Express's request/response set-up alone costs more than a small procedure). They are held
   * to the same per-key limits: each procedure of a batch counts as one request, and each
   * `organizations.delete` against the delete limit too. A batch holds at most
   * `MAX_BATCH_CALLS` calls, and its calls' weights together must fit the in-flight limit, else
   * it is refused with 400 `batch_too_large` before any call runs. A refusal is thrown from the
   * context, so tRPC answers it in its own shape (the contract's body in `data.contract`) for
   * every call of the batch.
   */
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: `${TRPC_BASE}/`,
    maxBodySize: MAX_BODY_BYTES,
    createContext: async ({ req, res, info }) => {
      if (info.calls.length > MAX_BATCH_CALLS) {
        throw asTRPCError(
          batchTooLarge(`A batch holds at most ${MAX_BATCH_CALLS} calls; this one has ${info.calls.length}.`),
        );
      }
      if (limits) {
        let organizationDeletes = 0;
        for (const call of info.calls) if (call.path === ORGANIZATION_DELETE) organizationDeletes++;
        const admission = await limits.admit(req, res, { requests: info.calls.length, organizationDeletes }, 'trpc');
        if (!admission.ok) {
          res.setHeader('Retry-After', String(admission.retryAfter));
          throw asTRPCError(admission.error);
        }
      }
      // A turn to run (see in-flight.ts), taken after the rate limit so a refused key never waits.
      let weight = 0;
      if (inFlight) {
        for (const call of info.calls) {
          // Only queries ask for pages; a mutation's body is left for tRPC to read. Input that
          // cannot be read weighs one: the call answers tRPC's own parse error.
          const input = info.type === 'query' ? await call.getRawInput().catch(() => undefined) : undefined;
          weight += weightOfPage(
            typeof input === 'object' && input !== null ? (input as { limit?: unknown }).limit : undefined,
          );
        }
        // A single call heavier than the limit runs alone (in-flight.ts); a batch must fit.
        if (info.calls.length > 1 && weight > inFlight.options.max) {
          throw asTRPCError(
            batchTooLarge(
              `This batch weighs ${weight} and at most ${inFlight.options.max} may run at once (a page of more than 25 items weighs more than one). Send fewer calls or ask for smaller pages.`,
            ),
          );
        }
      }
      const entered = inFlight?.enter(res, weight);
      const turn = entered instanceof Promise ? await entered : entered;
      if (turn && !turn.ok) {
        (req as ApiRequest).shed = true;
        res.setHeader('Retry-After', String(turn.retryAfter));
        throw asTRPCError(turn.error);
      }
      return createInnerContext(deps, req.headers.authorization, (req as ApiRequest).requestId, idempotencyKeyOf(req));
    },
    responseMeta: ({ ctx }) => ({ headers: ctx?.responseHeaders }),
    onError: ({ error, path }) => {
      if (contractError(error).status >= 500)
        deps.log.error({ err: error.cause ?? error, path }, 'trpc request failed');
    },
  });

  /**
   * `GET /sso/jwks/:clientId` is public, cacheable and the hottest read of all (every token
   * verifier polls it), so it is answered here from the signing service's in-memory key set —
   * the same `jwksOfClient` the procedure returns, serialised once per key set — instead of
   * through the bridge, which costs more than the document itself. Everything around it
   * (request id, security headers, rate limits, metrics) is the same as for every API path.
   */
  async function serveJwks(req: ApiRequest, res: ServerResponse, pathname: string): Promise<void> {
    const raw = pathname.slice(pathname.lastIndexOf('/') + 1);
    // Decoded as the bridge's parameters are; a malformed escape is looked up as sent (404).
    const clientId = decodeSegment(raw) ?? raw;
    const { body, etag } = await jwksOfClient(deps, clientId);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('ETag', etag);
    if (etagMatches(req.headers['if-none-match'], etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    let text = serialisedJwks.get(body);
    if (text === undefined) {
      text = JSON.stringify(body);
      serialisedJwks.set(body, text);
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  }

  async function handleApi(
    req: ApiRequest,
    res: ServerResponse,
    pathname: string,
    search: string,
    template: string,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    // The public JWKS is answered from memory: refusing it would cost as much as serving it, so it
    // takes neither a rate-limit count nor an in-flight turn.
    if (method === 'GET' && template === JWKS_TEMPLATE) {
      req.resume();
      await serveJwks(req, res, pathname);
      return;
    }
    if (limits) {
      const isDelete = method === ORGANIZATION_DELETE_ROUTE?.method && template === ORGANIZATION_DELETE_ROUTE.template;
      const admission = await limits.admit(req, res, { requests: 1, organizationDeletes: isDelete ? 1 : 0 }, 'api');
      if (!admission.ok) {
        req.resume();
        sendError(res, admission.error, { 'Retry-After': String(admission.retryAfter) });
        return;
      }
    }
    // A turn to run (see in-flight.ts), taken after the rate limit so a refused key never waits.
    // The body stays in the socket until then.
    const query = parseQuery(search);
    const entered = inFlight?.enter(res, weightOfPage(query.limit));
    const turn = entered instanceof Promise ? await entered : entered;
    if (turn && !turn.ok) {
      req.shed = true;
      req.resume();
      if (turn.reason !== 'closed') sendError(res, turn.error, { 'Retry-After': String(turn.retryAfter) });
      return;
    }
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      req.body = await readJsonBody(req);
      // The body is parsed; tell the bridge so, also for a bodyless POST such as /verify.
      req.headers['content-type'] = 'application/json';
    } else {
      req.resume();
    }
    req.query = query;
    req.pathParams = pathParamsOf(template, pathname);
    // The bridge renders errors in tRPC's shape; put the contract's body in its place.
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      if (res.statusCode === 204) {
        res.removeHeader('Content-Type');
        chunk = undefined;
      } else if (res.statusCode >= 400 && typeof chunk === 'string') {
        try {
          const shape = JSON.parse(chunk) as { data?: { contract?: { body: unknown } } };
          if (shape.data?.contract) chunk = JSON.stringify(shape.data.contract.body);
        } catch {
          // Leave a body we cannot read as it is.
        }
      }
      if (typeof chunk === 'string') res.setHeader('Content-Length', Buffer.byteLength(chunk));
      return end(chunk);
    }) as typeof res.end;
    // Over it, the body is never sent.
    boundResponse(res, maxResponseBytes, (error) => JSON.stringify(contractError(error).body));
    await bridge(req, res);
  }

  const handler: RequestListener = (request, res) => {
    const started = performance.now();
    const req = request as ApiRequest;
    req.requestId = requestIdOf(req);
    res.setHeader('X-Request-ID', req.requestId);
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? '' : url.slice(q + 1);
    const route = routes.match(method, pathname);
    const trpcCall = route.kind === 'none' && isTrpcPath(pathname);
    const label =
      route.kind === 'match'
        ? route.template
        : trpcCall
          ? TRPC_BASE
          : NAMED_PATHS.has(pathname)
            ? pathname
            : 'unmatched';
    res.on('finish', () => {
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(method, label, res.statusCode, seconds, req.shed === true);
      // The access log names the route and path, never headers, query strings or bodies.
      if (accessLog)
        deps.log.info(
          { req_id: req.requestId, method, route: label, path: pathname, status: res.statusCode, ms: seconds * 1000 },
          'request',
        );
    });
    if (route.kind === 'none') {
      if (trpcCall) {
        applyHeaders(res, API_SECURITY_HEADERS);
        boundResponse(res, maxResponseBytes, trpcErrorBody(pathname, search));
        trpc(req, res);
      } else app(req as Request, res as Response);
      return;
    }
    applyHeaders(res, API_SECURITY_HEADERS);
    if (route.kind === 'method') {
      req.resume();
      sendError(res, new ApiError(405, 'method_not_allowed', `${req.method} is not allowed here.`), {
        Allow: route.allow.join(', '),
      });
      return;
    }
    handleApi(req, res, pathname, search, route.template).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status } = contractError(error);
      if (status >= 500) deps.log.error({ err: error }, 'request failed');
      sendError(res, error, status === 413 ? { Connection: 'close' } : {});
    });
  };

  return { handler, express: app, metrics, limits, inFlight };
}
