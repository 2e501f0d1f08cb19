import {
  ApiError,
  apiErrorOf,
  appRouter,
  asTRPCError,
  type Deps,
  trpcContractError,
  trpcErrorShape,
} from '@atrium/routers';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import { resolveResponse } from '@trpc/server/http';
import { type Exchange, writeAnswer } from './exchange.ts';
import { weightOfPage } from './in-flight.ts';
import type { Call, Codec } from './pipeline.ts';
import { logFailure, MAX_BATCH_CALLS, type Outcome, responseTooLarge, writeOutcome } from './render.ts';

/** Where tRPC clients call the procedures (`/trpc/organizations.create`, batches `a,b?batch=1`). */
export const TRPC_BASE = '/trpc';

/** The procedure whose calls count against the organization-delete limit as well. */
const ORGANIZATION_DELETE = 'organizations.delete';

export function isTrpcPath(pathname: string): boolean {
  return pathname.startsWith(TRPC_BASE) && (pathname.length === TRPC_BASE.length || pathname[TRPC_BASE.length] === '/');
}

const serverError = () => new ApiError(500, 'server_error', 'An unexpected error occurred.');

/**
 * An error for the whole `/trpc` response in tRPC's shape (the router's error formatter, which
 * carries the contract's body in `data.contract`): one per call of a batch, else one.
 */
function trpcErrorOutcome(ex: Exchange, error: unknown): Outcome {
  const api = apiErrorOf(error) ?? serverError();
  const trpcError = asTRPCError(api);
  const paths = ex.pathname.slice(TRPC_BASE.length + 1).split(',');
  const shape = (path: string) => ({ error: trpcErrorShape(appRouter, trpcError, path) });
  const batch = new URLSearchParams(ex.search).get('batch') === '1';
  const body = JSON.stringify(batch ? paths.map(shape) : shape(paths[0] ?? ''));
  return { status: api.status, body, contentType: 'application/json; charset=utf-8' };
}

/**
 * What a batch weighs against the in-flight limit: its queries' pages (the `limit` of each
 * call's input, read from `?input=` as tRPC reads it); a mutation weighs one, and so does input
 * that cannot be read (tRPC refuses it).
 */
function weightOf(method: string, params: URLSearchParams, calls: number, batch: boolean): number {
  if (method !== 'GET') return calls;
  const raw = params.get('input');
  let input: unknown;
  try {
    input = raw === null ? undefined : JSON.parse(raw);
  } catch {
    input = undefined;
  }
  let weight = 0;
  for (let i = 0; i < calls; i++) {
    const one = batch ? (isObject(input) ? input[i] : undefined) : input;
    weight += weightOfPage(isObject(one) ? one.limit : undefined);
  }
  return weight;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
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
 * The `/trpc` codec: a call is the procedures its URL names (one, or a batch of at most
 * `MAX_BATCH_CALLS`, each counted as a request and `organizations.delete` against the delete
 * limit too), its body read raw for tRPC to parse; tRPC resolves it (`resolveResponse`, as its
 * node adapter does) in the pipeline's context, and its response is written within the response
 * bound (413 in tRPC's shape past it). Every refusal is in tRPC's shape.
 */
export function trpcCodec(deps: Deps, maxBytes: number, maxBodyBytes: number): Codec<Call, Response> {
  return {
    surface: 'trpc',
    decode(ex) {
      const params = new URLSearchParams(ex.search);
      const batch = params.get('batch') === '1';
      const path = ex.pathname.slice(TRPC_BASE.length + 1).replace(/\/$/, '');
      const paths = batch ? path.split(',') : [path];
      if (paths.length > MAX_BATCH_CALLS) {
        const message = `A batch holds at most ${MAX_BATCH_CALLS} calls; this one has ${paths.length}.`;
        throw new ApiError(400, 'batch_too_large', message);
      }
      const organizationDeletes = paths.filter((name) => name === ORGANIZATION_DELETE).length;
      return {
        cost: { requests: paths.length, organizationDeletes },
        reads: ex.method !== 'GET' && ex.method !== 'HEAD' ? 'raw' : undefined,
        weight: weightOf(ex.method, params, paths.length, batch),
        calls: paths.length,
      };
    },
    dispatch(ex, call, ctx) {
      const { req, res } = ex;
      // tRPC's node adapter takes a body already read from `req.body` (a string is passed as is).
      if (call.raw !== undefined) (req as { body?: string }).body = call.raw.toString('utf8');
      const request = incomingMessageToRequest(req, res, { maxBodySize: maxBodyBytes });
      const path = new URL(request.url).pathname
        .replace(/^\/|\/$/g, '')
        .slice(TRPC_BASE.length)
        .replace(/^\/|\/$/g, '');
      return resolveResponse({
        router: appRouter,
        req: request,
        path,
        error: null,
        createContext: async () => ctx,
        // Headers the procedures ask for (`Idempotent-Replayed: true` on a replay).
        responseMeta: () => ({ headers: ctx.responseHeaders }),
        onError: ({ error }) => {
          if (trpcContractError(error).status >= 500) logFailure(deps, error, ex);
        },
      });
    },
    async encode(ex, _call, response) {
      const body = await boundedBody(response, maxBytes);
      if (body === undefined) return writeOutcome(ex, trpcErrorOutcome(ex, responseTooLarge(maxBytes)));
      const own: (string | number)[] = [];
      for (const [name, value] of response.headers) own.push(name, value);
      writeAnswer(ex, response.status, own, body);
    },
    encodeError(ex, error, headers) {
      writeOutcome(ex, trpcErrorOutcome(ex, error), headers);
    },
  };
}
