import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ApiError, appRouter, contractError, createInnerContext, type Deps } from '@atrium/routers';
import { apiReference } from '@scalar/express-api-reference';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { MAX_BODY_BYTES, parseQuery, readJsonBody } from './body.ts';
import { buildOpenApiDocument, successStatuses } from './openapi.ts';
import { RouteTable } from './routes.ts';

type ApiRequest = IncomingMessage & { body?: unknown; query?: unknown; requestId?: string };

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

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

/** Does an `If-None-Match` header name the response's ETag (or `*`)? Weak comparison. */
function etagMatches(ifNoneMatch: string | string[] | undefined, etag: unknown): boolean {
  if (typeof etag !== 'string' || ifNoneMatch === undefined) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch).split(',').map(strip);
  return wanted.includes('*') || wanted.includes(strip(etag));
}

export interface AtriumApp {
  /** The node:http listener: API paths go straight to the OpenAPI bridge, the rest to Express. */
  handler: RequestListener;
  express: express.Express;
}

export interface AppOptions {
  /** Public base URL, used in the OpenAPI document. */
  baseUrl: string;
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

  const bridge = createOpenApiNodeHttpHandler({
    router: appRouter,
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => createInnerContext(deps, req.headers.authorization, (req as ApiRequest).requestId),
    responseMeta: ({ paths, errors, ctx }) => {
      if (errors.length > 0) return { status: contractError(errors[0]).status };
      const status = paths?.[0] ? statuses.get(paths[0]) : undefined;
      // Headers a procedure asked for (Cache-Control, ETag, …) go out with its success.
      const headers = ctx?.resHeaders.size ? Object.fromEntries(ctx.resHeaders) : undefined;
      return { ...(status ? { status } : {}), ...(headers ? { headers } : {}) };
    },
    onError: ({ error, path }) => {
      const { status } = contractError(error);
      if (status >= 500) deps.log.error({ err: error.cause ?? error, path }, 'request failed');
    },
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
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
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/docs', apiReference({ url: '/openapi.json', pageTitle: 'Atrium API reference' }));
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      maxBodySize: MAX_BODY_BYTES,
      createContext: ({ req }) => createInnerContext(deps, req.headers.authorization, (req as ApiRequest).requestId),
      onError: ({ error, path }) => {
        if (contractError(error).status >= 500)
          deps.log.error({ err: error.cause ?? error, path }, 'trpc request failed');
      },
    }),
  );
  app.use((_req, res) => {
    sendError(res, new ApiError(404, 'route_not_found', 'No such route.'));
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.log.error({ err: error }, 'unhandled error');
    sendError(res, error);
  });

  async function handleApi(req: ApiRequest, res: ServerResponse, search: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      req.body = await readJsonBody(req);
      // The body is parsed; tell the bridge so, also for a bodyless POST such as /verify.
      req.headers['content-type'] = 'application/json';
    } else {
      req.resume();
    }
    req.query = parseQuery(search);
    // The bridge renders errors in tRPC's shape; put the contract's body in its place.
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      if (
        res.statusCode === 200 &&
        method === 'GET' &&
        etagMatches(req.headers['if-none-match'], res.getHeader('ETag'))
      ) {
        // A conditional GET whose representation has not changed: 304 without a body.
        res.statusCode = 304;
        res.removeHeader('Content-Type');
        res.removeHeader('Content-Length');
        return end();
      }
      if (res.statusCode === 204) {
        res.removeHeader('Content-Type');
        return end();
      }
      if (res.statusCode >= 400 && typeof chunk === 'string') {
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
    await bridge(req, res);
  }

  const handler: RequestListener = (request, res) => {
    const req = request as ApiRequest;
    req.requestId = requestIdOf(req);
    res.setHeader('X-Request-ID', req.requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? '' : url.slice(q + 1);
    const route = routes.match(req.method ?? 'GET', pathname);
    if (route.kind === 'none') {
      app(req as Request, res as Response);
      return;
    }
    if (route.kind === 'method') {
      req.resume();
      sendError(res, new ApiError(405, 'method_not_allowed', `${req.method} is not allowed here.`), {
        Allow: route.allow.join(', '),
      });
      return;
    }
    handleApi(req, res, search).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status } = contractError(error);
      if (status >= 500) deps.log.error({ err: error }, 'request failed');
      sendError(res, error, status === 413 ? { Connection: 'close' } : {});
    });
  };

  return { handler, express: app };
}
