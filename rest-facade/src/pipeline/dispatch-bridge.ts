import { EventEmitter } from 'node:events';
import { appRouter, type Context, trpcContractError } from '@atrium/routers';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { MAX_BODY_BYTES } from './body.ts';
import { type RestDispatcher, takesBody } from './dispatch.ts';
import { operationFinder } from './dispatch-direct.ts';
import { decodedParams } from './path-params.ts';
import type { Outcome } from './render.ts';

/**
 * What the bridge writes, kept instead of sent: the render step writes the outcome. An event
 * emitter, as the bridge ties each call's signal to the response's `close` (`once`/`off`).
 */
class Capture extends EventEmitter {
  statusCode = 200;
  body: string | undefined;
  error: unknown;
  writableEnded = false;
  constructor(
    readonly ctx: Context,
    readonly procedure: string | undefined,
    readonly pathname: string,
  ) {
    super();
  }
  setHeader(): void {}
  end(body?: string): void {
    this.body = body;
    this.writableEnded = true;
  }
}

/**
 * A caller for the one procedure of the call, whose input gets its path parameters decoded:
 * the bridge hands them over still percent-encoded.
 */
function decodingCaller(ctx: Context, capture: Capture): unknown {
  const segments = (capture.procedure ?? '').split('.');
  const caller = appRouter.createCaller(ctx) as unknown as Record<string, unknown>;
  const leaf = segments.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
    input: unknown,
  ) => Promise<unknown>;
  const call = (input: Record<string, string> | undefined) =>
    leaf(input && typeof input === 'object' ? decodedParams(input, capture.pathname) : input);
  return segments.reduceRight<unknown>((node, key) => ({ [key]: node }), call);
}

/**
 * The OpenAPI bridge (trpc-to-openapi's node-http handler) as a dispatcher, kept selectable
 * (`AppOptions.dispatcher: 'bridge'`) to prove the direct dispatcher answers as it does. Its
 * answer is captured, not sent: a success is rendered as the bridge wrote it, an error from
 * the error itself, by the one renderer.
 */
export function bridgeDispatcher(): RestDispatcher {
  const find = operationFinder();
  const byRequest = new WeakMap<object, Capture>();
  const byContext = new WeakMap<object, Capture>();
  const bridge = createOpenApiNodeHttpHandler({
    router: {
      ...appRouter,
      createCaller: ((ctx: Context) => decodingCaller(ctx, byContext.get(ctx) as Capture)) as never,
    },
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => {
      const capture = byRequest.get(req) as Capture;
      byContext.set(capture.ctx, capture);
      return capture.ctx;
    },
    responseMeta: ({ errors }) => (errors.length > 0 ? { status: trpcContractError(errors[0]).status } : {}),
    onError: ({ error, req }) => {
      const capture = byRequest.get(req);
      if (capture) capture.error = error;
    },
  });
  return async (call) => {
    const { req, method, pathname } = call.ex;
    const found = find(method, pathname);
    const capture = new Capture(call.ctx, found?.op.path, pathname);
    byRequest.set(req, capture);
    const request = req as typeof req & { query?: unknown; body?: unknown };
    // The bridge reads a DELETE's input from the query: a `bodyOnDelete` body goes there.
    request.query = !takesBody(method) && call.body ? Object.assign({}, call.query, call.body) : call.query;
    if (takesBody(method)) {
      request.body = call.body;
      // The body is parsed; tell the bridge so, also for a bodyless POST such as /verify.
      req.headers['content-type'] = 'application/json';
    }
    await bridge(req, capture as never);
    // Closed as a sent response would be: the bridge's listeners on the request let go.
    capture.emit('close');
    if (capture.statusCode >= 400) throw capture.error ?? new Error(capture.body);
    const outcome: Outcome = { status: found?.op.status ?? 200, body: capture.body, contentType: 'application/json' };
    return outcome.status === 204 ? { status: 204, body: undefined, contentType: undefined } : outcome;
  };
}
