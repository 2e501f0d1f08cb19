import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  API_SECURITY_HEADERS,
  applyHeaders,
  createApp,
  MAX_BODY_BYTES,
  parseQuery,
  RouteTable,
  readJsonBody,
} from '@atrium/rest-facade';
import {
  apiErrorOf,
  appRouter,
  type Context,
  createInnerContext,
  type Deps,
  procedureEntries,
  trpcContractError,
} from '@atrium/routers';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';

/**
 * trpc-to-openapi's own node-http handler (the OpenAPI bridge the server dispatched through
 * before it had its route table) serving the REST operations, to prove the server's dispatch
 * answers as the bridge does (dispatchers.http.test.ts). The steps around dispatch are the
 * server's own: the route step (what is not a REST call, a wrong verb, a dot segment, the
 * JWKS, goes to a server of its own), the body reader, the security headers and the
 * contract's error body; the bridge finds the procedure, builds its input and runs it.
 */

/** What the bridge writes, kept instead of sent. An emitter: the bridge ties its signal to `close`. */
class Capture extends EventEmitter {
  statusCode = 200;
  body: string | undefined;
  error: unknown;
  writableEnded = false;
  setHeader(): void {}
  end(body?: string): void {
    this.body = body;
    this.writableEnded = true;
  }
}

/** Decodes the string values of the input when the path carries escapes (the bridge hands path parameters over encoded). */
function decodedParams(input: unknown, pathname: string): unknown {
  if (!pathname.includes('%') || input === null || typeof input !== 'object') return input;
  const params: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(input)) {
    let value = raw;
    if (typeof raw === 'string') {
      try {
        value = decodeURIComponent(raw);
      } catch {
        // A malformed escape is left as sent.
      }
    }
    params[name] = value;
  }
  return params;
}

/** A caller whose procedures get their input decoded (the bridge walks it by the procedure's path). */
function decodingCaller(ctx: Context, pathname: string): unknown {
  const caller = appRouter.createCaller(ctx) as unknown;
  const at = (path: string[]): unknown =>
    new Proxy(() => {}, {
      get: (_target, key) => at([...path, String(key)]),
      apply: (_target, _this, [input]) => {
        const leaf = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller);
        return (leaf as (input: unknown) => Promise<unknown>)(decodedParams(input, pathname));
      },
    });
  return at([]);
}

/** The contract's error answer, as the server's render step writes it. */
function writeError(res: ServerResponse, error: unknown, headers: Record<string, string> = {}): void {
  const { status, body } = trpcContractError(error);
  const text = JSON.stringify(body);
  const retryAfter = apiErrorOf(error)?.retryAfterSeconds;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

const takesBody = (method: string) => method !== 'GET' && method !== 'DELETE';

export async function startBridgeApp(deps: Deps) {
  const app = createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false, accessLog: false });
  const routes = new RouteTable(procedureEntries(appRouter));
  const statuses = new Map(procedureEntries(appRouter).map((e) => [e.path, e.meta?.successStatus ?? 200]));
  const calls = new WeakMap<object, { capture: Capture; ctx: Context; pathname: string }>();
  const byContext = new WeakMap<object, string>();
  const bridge = createOpenApiNodeHttpHandler({
    router: {
      ...appRouter,
      createCaller: ((ctx: Context) => decodingCaller(ctx, byContext.get(ctx) ?? '')) as never,
    },
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => {
      const call = calls.get(req) as { ctx: Context; pathname: string };
      byContext.set(call.ctx, call.pathname);
      return call.ctx;
    },
    responseMeta: ({ errors, paths }) =>
      errors.length > 0
        ? { status: trpcContractError(errors[0]).status }
        : { status: statuses.get(paths?.[0] ?? '') ?? 200 },
    onError: ({ error, req }) => {
      const call = calls.get(req);
      if (call) call.capture.error = error;
    },
  });

  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    search: string,
    readsBody: boolean,
  ) {
    const method = req.method ?? 'GET';
    const requestId = randomUUID();
    res.setHeader('X-Request-ID', requestId);
    if (pathname.startsWith('/_widgets/')) res.setHeader('Vary', 'Origin');
    applyHeaders(res, API_SECURITY_HEADERS);
    let body: Record<string, unknown> | undefined;
    try {
      if (readsBody) body = await readJsonBody(req, undefined, res);
      else req.resume();
    } catch (error) {
      const { status } = trpcContractError(error);
      return writeError(res, error, status === 413 || status === 408 ? { Connection: 'close' } : {});
    }
    const query = parseQuery(search);
    const ctx = createInnerContext(deps, req.headers.authorization, requestId);
    const capture = new Capture();
    calls.set(req, { capture, ctx, pathname });
    const request = req as typeof req & { query?: unknown; body?: unknown };
    // The bridge reads a DELETE's input from the query: a `bodyOnDelete` body goes there.
    request.query = !takesBody(method) && body ? Object.assign({}, query, body) : query;
    if (takesBody(method)) {
      request.body = body;
      // The body is parsed; tell the bridge so, also for a bodyless POST such as /verify.
      req.headers['content-type'] = 'application/json';
    }
    await bridge(req, capture as never);
    capture.emit('close');
    if (capture.statusCode >= 400) return writeError(res, capture.error ?? new Error(capture.body));
    res.statusCode = capture.statusCode;
    for (const [name, value] of Object.entries(ctx.responseHeaders)) res.setHeader(name, value);
    if (capture.statusCode === 204 || capture.body === undefined) return void res.end();
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(capture.body));
    res.end(capture.body);
  }

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const matched = routes.match(req.method ?? 'GET', pathname);
    if (matched.kind !== 'match' || matched.template === '/sso/jwks/{clientId}') return app.handler(req, res);
    serve(req, res, pathname, q === -1 ? '' : url.slice(q + 1), matched.route.readsBody).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else writeError(res, error);
    });
  });
  // Its connection idles while the server answers the same request first (seconds, on a busy
  // machine): past Node's 5 s the client could reuse a socket being closed (ECONNRESET).
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
