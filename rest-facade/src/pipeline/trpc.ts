import { ApiError, appRouter, asTRPCError, createInnerContext, type Deps, trpcContractError } from '@atrium/routers';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import type { TRPCRequestInfo } from '@trpc/server/http';
import { resolveResponse } from '@trpc/server/http';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { clientOf, deviceOf, elevatedAccessOf, environmentOf, type Identity } from './authenticate.ts';
import { type BodyBounds, BodyBudgetExceeded, closesConnection, DEFAULT_BODY_BOUNDS, readBody } from './body.ts';
import { consoleCredentials } from './console.ts';
import { type Exchange, idempotencyKeyOf } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import { type Limits, shareOf } from './limits.ts';
import { logFailure, MAX_BATCH_CALLS, type Outcome, responseTooLarge, writeOutcome } from './render.ts';

/** Where tRPC clients call the procedures (`/trpc/organizations.create`, batches `a,b?batch=1`). */
export const TRPC_BASE = '/trpc';

/** The procedure whose calls count against the organization-delete limit as well. */
const ORGANIZATION_DELETE = 'organizations.delete';

export function isTrpcPath(pathname: string): boolean {
  return pathname.startsWith(TRPC_BASE) && (pathname.length === TRPC_BASE.length || pathname[TRPC_BASE.length] === '/');
}

const batchTooLarge = (message: string) => new ApiError(400, 'batch_too_large', message);

/** An error for the whole `/trpc` response in tRPC's shape: one per call of a batch, else one. */
function trpcErrorOutcome(ex: Exchange, error: ApiError): Outcome {
  const paths = ex.pathname.slice(TRPC_BASE.length + 1).split(',');
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
  const batch = new URLSearchParams(ex.search).get('batch') === '1';
  const body = JSON.stringify(batch ? paths.map(shape) : shape(paths[0] ?? ''));
  return { status: error.status, body, contentType: 'application/json; charset=utf-8' };
}

/** What a batch weighs against the in-flight limit: its queries' pages; a mutation weighs one. */
async function weightOf(info: TRPCRequestInfo): Promise<number> {
  let weight = 0;
  for (const call of info.calls) {
    // A mutation's body is left for tRPC to read; input that cannot be read weighs one.
    const input = info.type === 'query' ? await call.getRawInput().catch(() => undefined) : undefined;
    weight += weightOfPage(
      typeof input === 'object' && input !== null ? (input as { limit?: unknown }).limit : undefined,
    );
  }
  return weight;
}

/** The procedures a `/trpc` URL names: one, or each of a batch's (`a,b?batch=1`), as tRPC splits them. */
function pathsOf(ex: Exchange): string[] {
  const path = ex.pathname.slice(TRPC_BASE.length + 1).replace(/\/$/, '');
  return new URLSearchParams(ex.search).get('batch') === '1' ? path.split(',') : [path];
}

/**
 * The shared steps that run before tRPC reads anything: at most `MAX_BATCH_CALLS` calls; each
 * procedure of a batch counts as one request (and `organizations.delete` against the delete
 * limit too); then the body, bounded in size and time, read before the batch takes a turn (in
 * `admitBatch`) so a slow body holds no turn. A refusal is answered here in tRPC's shape.
 */
async function admitRequest(
  limits: Limits,
  ex: Exchange,
  bounds: BodyBounds,
): Promise<{ identity: Identity | undefined } | undefined> {
  const paths = pathsOf(ex);
  if (paths.length > MAX_BATCH_CALLS) {
    ex.req.resume();
    const error = batchTooLarge(`A batch holds at most ${MAX_BATCH_CALLS} calls; this one has ${paths.length}.`);
    writeOutcome(ex.res, trpcErrorOutcome(ex, error));
    return undefined;
  }
  const identity = await limits.identify(ex, 'trpc');
  const organizationDeletes = paths.filter((path) => path === ORGANIZATION_DELETE).length;
  const counted = limits.count(identity, ex.res, { requests: paths.length, organizationDeletes });
  const limited = counted instanceof Promise ? await counted : counted;
  if (limited) {
    ex.req.resume();
    if (!limited.silent) {
      ex.res.setHeader('Retry-After', String(limited.retryAfter));
      writeOutcome(ex.res, trpcErrorOutcome(ex, limited.error));
    }
    return undefined;
  }
  if (ex.method !== 'GET' && ex.method !== 'HEAD') {
    let body: Buffer;
    try {
      body = await readBody(ex.req, bounds, ex.res);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error instanceof BodyBudgetExceeded) ex.shed = true;
      if (closesConnection(error.status)) ex.res.setHeader('Connection', 'close');
      writeOutcome(ex.res, trpcErrorOutcome(ex, error));
      return undefined;
    }
    // tRPC's node adapter takes a body already read from `req.body` (a string is passed as is).
    (ex.req as { body?: string }).body = body.toString('utf8');
  }
  return { identity };
}

/**
 * The `/trpc` context, where the rest of the shared steps run for a batch, once tRPC has parsed
 * it: its calls' weights together must fit the in-flight limit, and it waits for its turn. A
 * refusal is thrown as a TRPCError, so tRPC answers it in its own shape (the contract's body in
 * `data.contract`).
 */
async function admitBatch(deps: Deps, limits: Limits, ex: Exchange, info: TRPCRequestInfo, identity?: Identity) {
  const calls = info.calls.length;
  const max = limits.inFlight?.options.max;
  const weight = max === undefined ? 0 : await weightOf(info);
  // A single call heavier than the limit runs alone (in-flight.ts); a batch must fit.
  if (max !== undefined && calls > 1 && weight > max) {
    throw batchTooLarge(
      `This batch weighs ${weight} and at most ${max} may run at once (a page of more than 25 items weighs more than one). Send fewer calls or ask for smaller pages.`,
    );
  }
  const waited = await limits.turn(ex.res, weight, shareOf(identity));
  if (waited) {
    ex.shed = true;
    ex.res.setHeader('Retry-After', String(waited.retryAfter));
    throw waited.error;
  }
  const { authorization } = ex.req.headers;
  const ctx = createInnerContext(deps, authorization, ex.requestId, idempotencyKeyOf(ex), environmentOf(identity));
  ctx.client = clientOf(identity);
  ctx.device = deviceOf(ex);
  ctx.elevatedAccess = elevatedAccessOf(ex.req);
  // The operator console's calls carry its session cookie (and CSRF header), never a token.
  const console = authorization ? undefined : consoleCredentials(ex.req);
  if (console?.session !== undefined) ctx.console = console;
  return ctx;
}

/** The response's body, or undefined when it would pass `maxBytes` (then it is not read further). */
async function boundedBody(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * The `/trpc` transport: batch size → authenticate → rate limit → body (`admitRequest`), then
 * tRPC resolves the call (`resolveResponse`, as its node adapter does) after its turn
 * (`admitBatch`), and the render step writes its response, or 413 in tRPC's shape when it is
 * over the bound.
 */
export function trpcTransport(
  deps: Deps,
  limits: Limits,
  maxBytes: number,
  bounds: BodyBounds = DEFAULT_BODY_BOUNDS,
): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    const { req, res } = ex;
    try {
      const admitted = await admitRequest(limits, ex, bounds);
      if (!admitted) return;
      const request = incomingMessageToRequest(req, res, { maxBodySize: bounds.limit });
      const path = new URL(request.url).pathname
        .replace(/^\/|\/$/g, '')
        .slice(TRPC_BASE.length)
        .replace(/^\/|\/$/g, '');
      const response = await resolveResponse({
        router: appRouter,
        req: request,
        path,
        error: null,
        createContext: ({ info }) =>
          admitBatch(deps, limits, ex, info, admitted.identity).catch((error: unknown) => {
            throw asTRPCError(error);
          }),
        // Headers the procedures ask for (`Idempotent-Replayed: true` on a replay).
        responseMeta: ({ ctx }) => ({ headers: ctx?.responseHeaders }),
        onError: ({ error }) => {
          if (trpcContractError(error).status >= 500) logFailure(deps, error, ex);
        },
      });
      res.statusCode = response.status;
      for (const [name, value] of response.headers) res.setHeader(name, value);
      const body = await boundedBody(response, maxBytes);
      if (body === undefined) return writeOutcome(res, trpcErrorOutcome(ex, responseTooLarge(maxBytes)));
      res.setHeader('Content-Length', body.byteLength);
      res.end(body);
    } catch (error) {
      logFailure(deps, error, ex);
      if (res.headersSent) res.destroy();
      else writeOutcome(res, trpcErrorOutcome(ex, new ApiError(500, 'server_error', 'An unexpected error occurred.')));
    }
  };
}
