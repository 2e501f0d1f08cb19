import { ApiError, appRouter, asTRPCError, contractError, createInnerContext, type Deps } from '@atrium/routers';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import type { TRPCRequestInfo } from '@trpc/server/http';
import { resolveResponse } from '@trpc/server/http';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { clientOf, deviceOf, elevatedAccessOf, environmentOf } from './authenticate.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { consoleCredentials } from './console.ts';
import { type Exchange, idempotencyKeyOf } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import type { Limits } from './limits.ts';
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

/**
 * The `/trpc` context, where the shared steps run for a batch: each procedure of it counts as
 * one request (and `organizations.delete` against the delete limit too); at most
 * `MAX_BATCH_CALLS` calls, whose weights together must fit the in-flight limit. A refusal is
 * thrown as a TRPCError, so tRPC answers it in its own shape (the contract's body in `data.contract`).
 */
async function admitBatch(deps: Deps, limits: Limits, ex: Exchange, info: TRPCRequestInfo) {
  const calls = info.calls.length;
  if (calls > MAX_BATCH_CALLS)
    throw batchTooLarge(`A batch holds at most ${MAX_BATCH_CALLS} calls; this one has ${calls}.`);
  const identity = await limits.identify(ex, 'trpc');
  const organizationDeletes = info.calls.filter((call) => call.path === ORGANIZATION_DELETE).length;
  const counted = limits.count(identity, ex.res, { requests: calls, organizationDeletes });
  const limited = counted instanceof Promise ? await counted : counted;
  if (limited) {
    ex.res.setHeader('Retry-After', String(limited.retryAfter));
    throw limited.error;
  }
  const max = limits.inFlight?.options.max;
  const weight = max === undefined ? 0 : await weightOf(info);
  // A single call heavier than the limit runs alone (in-flight.ts); a batch must fit.
  if (max !== undefined && calls > 1 && weight > max) {
    throw batchTooLarge(
      `This batch weighs ${weight} and at most ${max} may run at once (a page of more than 25 items weighs more than one). Send fewer calls or ask for smaller pages.`,
    );
  }
  const waited = await limits.turn(ex.res, weight);
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
 * The `/trpc` transport: tRPC resolves the call (`resolveResponse`, as its node adapter does)
 * and the render step writes its response, or 413 in tRPC's shape when it is over the bound.
 */
export function trpcTransport(deps: Deps, limits: Limits, maxBytes: number): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    const { req, res } = ex;
    try {
      const request = incomingMessageToRequest(req, res, { maxBodySize: MAX_BODY_BYTES });
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
          admitBatch(deps, limits, ex, info).catch((error: unknown) => {
            throw asTRPCError(error);
          }),
        // Headers the procedures ask for (`Idempotent-Replayed: true` on a replay).
        responseMeta: ({ ctx }) => ({ headers: ctx?.responseHeaders }),
        onError: ({ error }) => {
          if (contractError(error).status >= 500) logFailure(deps, error, ex);
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
