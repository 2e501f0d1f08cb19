import {
  ApiError,
  authenticateClientToken,
  type ClientCaller,
  type ClientScope,
  clientSchema,
  contractError,
  type Deps,
} from '@atrium/routers';
import { createGraphQLError, createYoga, maskError } from 'graphql-yoga';
import { clientOf } from './authenticate.ts';
import { readJsonBody } from './body.ts';
import type { Exchange } from './exchange.ts';
import type { Limits, Refusal } from './limits.ts';

/** Where the official widgets (and graphql-request) send client GraphQL. */
export const GRAPHQL_PATH = '/client/graphql';

/** A refusal in GraphQL's shape, with the HTTP status the widgets act on (403 → fetch a new token). */
function refuseGraphQL(ex: Exchange, error: unknown, headers: Record<string, string> = {}): void {
  ex.req.resume();
  const { status, body } = contractError(error);
  const code = status === 403 ? 'FORBIDDEN' : status === 429 ? 'RATE_LIMITED' : body.code.toUpperCase();
  ex.res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  ex.res.end(JSON.stringify({ errors: [{ message: body.message, extensions: { code, status } }] }));
}

/** The GraphQL code of an ApiError's status (the widgets act on FORBIDDEN, WIDGETS-API.md §1.4). */
const GRAPHQL_CODES: Record<number, string> = {
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  400: 'BAD_USER_INPUT',
  422: 'BAD_USER_INPUT',
};

/** Resolver errors: an ApiError keeps its message with `extensions.code`/`status`; anything else is masked. */
function maskApiError(error: unknown, message: string, isDev?: boolean): Error {
  const original = (error as { originalError?: unknown }).originalError ?? error;
  if (original instanceof ApiError && GRAPHQL_CODES[original.status]) {
    const extensions = { code: GRAPHQL_CODES[original.status], status: original.status };
    return createGraphQLError(original.message, { extensions });
  }
  return maskError(error, message, isDev);
}

/**
 * The GraphQL transport: authenticate (a client or widget token) → limits → graphql-yoga over
 * the client schema (routers/src/client-api/graphql). Resolvers get the caller's ClientScope.
 */
export function graphqlTransport(deps: Deps, limits: Limits): (ex: Exchange) => Promise<void> {
  const yoga = createYoga<{ scope: ClientScope }>({
    schema: clientSchema(),
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: false,
    landingPage: false,
    cors: false,
    logging: false,
    maskedErrors: { maskError: maskApiError },
  });
  const refuse = (ex: Exchange, refusal: Refusal): void => {
    if (refusal.silent) ex.req.resume();
    else refuseGraphQL(ex, refusal.error, { 'Retry-After': String(refusal.retryAfter) });
  };

  return async (ex) => {
    const identity = await limits.identify(ex.req, 'api');
    const counted = limits.count(identity, ex.res, { requests: 1, organizationDeletes: 0 });
    const limited = counted instanceof Promise ? await counted : counted;
    if (limited) return refuse(ex, limited);
    const waited = await limits.turn(ex.res, 1);
    if (waited) {
      ex.shed = true;
      return refuse(ex, waited);
    }
    let caller: ClientCaller;
    try {
      caller = clientOf(identity) ?? (await authenticateClientToken(deps, ex.req.headers.authorization));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return refuseGraphQL(ex, error);
    }
    const { env, principal } = caller;
    const scope: ClientScope = { db: deps.db, env, now: deps.now, deps, client: principal };
    // The body through the pipeline's own bounds (size, depth, JSON only); yoga gets it parsed again.
    const body = ex.method === 'POST' ? JSON.stringify(await readJsonBody(ex.req)) : undefined;
    if (body === undefined) ex.req.resume();
    const url = `http://localhost${ex.pathname}${ex.search ? `?${ex.search}` : ''}`;
    const headers = { 'content-type': 'application/json', accept: String(ex.req.headers.accept ?? 'application/json') };
    const response = await yoga.fetch(url, { method: ex.method, headers, body }, { scope });
    const text = await response.text();
    ex.res.writeHead(response.status, {
      'Content-Type': response.headers.get('content-type') ?? 'application/json; charset=utf-8',
    });
    ex.res.end(text);
  };
}
