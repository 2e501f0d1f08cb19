import {
  ApiError,
  apiErrorOf,
  authenticateClientToken,
  clientSchema,
  type Deps,
  type GraphQLContext,
  trpcContractError,
} from '@atrium/routers';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { clientOf, clientRefusalOf, deviceOf } from './authenticate.ts';
import { type Exchange, namedIn, pushHeaders, writeAnswer } from './exchange.ts';
import type { Call, Codec } from './pipeline.ts';
import type { Cost } from './rate-limit.ts';
import { logFailure } from './render.ts';

/** Where the official widgets (and graphql-request) send client GraphQL. */
export const GRAPHQL_PATH = '/client/graphql';

export interface GraphQLOptions {
  /** Answer `__schema`/`__type` (off in production unless ATRIUM_GRAPHQL_INTROSPECTION=1; server/src/config.ts). */
  introspection: boolean;
}

/**
 * The context of one GraphQL request: the resolvers' (the call context, routers'
 * GraphQLContext), and the request id unexpected errors are logged with.
 */
export interface YogaContext extends GraphQLContext {
  requestId: string;
  /** A POST's body as the pipeline read it (bounded and parsed once; `useParsedBody`). */
  body?: Record<string, unknown>;
}

/**
 * Depth, cost, aliases, directives and tokens per document, bounded before anything runs
 * (graphql-armor's validation rules). The widgets' deepest documents (a list → its items → their
 * roles) are depth 4; introspection is exempt from depth and cost.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: { n: 8 },
  costLimit: { maxCost: 5000 },
  maxAliases: { n: 15 },
  maxDirectives: { n: 50 },
  maxTokens: { n: 2000 },
} as const;

/**
 * An ApiError's status as GraphQL's `extensions.code` (the codes Apollo clients know). A 503
 * (the request deadline, the in-flight limit's shed load, the database out of reach) is
 * `SERVICE_UNAVAILABLE`, as `/trpc` names it: the call may be sent again, unlike a fault
 * (`INTERNAL_SERVER_ERROR`). A body refused for its size or its slowness keeps tRPC's names too.
 */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'BAD_USER_INPUT',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

export function graphqlCodeOf(status: number): string {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/**
 * One error of an execution as the caller sees it: an ApiError (however wrapped) keeps its
 * message with `extensions {code, status}`; GraphQL's own errors (syntax, validation, variables)
 * pass; anything else is logged with the request id and masked.
 */
function publicError(deps: Deps, error: GraphQLError, requestId: string): GraphQLError {
  const original = error.originalError;
  if (original === undefined || original instanceof GraphQLError) return error;
  const api = apiErrorOf(original);
  const at = { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path };
  if (api) {
    const extensions = {
      code: graphqlCodeOf(api.status),
      status: api.status,
      ...(api.errors && { errors: api.errors }),
    };
    return new GraphQLError(api.message, { ...at, extensions });
  }
  logFailure(deps, original, { requestId, logPath: GRAPHQL_PATH });
  return new GraphQLError('Unexpected error.', { ...at, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

/** What a plugin's `onExecute` may return: the hooks of one execution. */
type ExecuteHooks = Exclude<Awaited<ReturnType<NonNullable<Plugin<YogaContext>['onExecute']>>>, void>;

/**
 * Maps every execution error through `publicError` (runs before yoga's own masking, which then
 * lets them pass). Its hooks are made once, not per request.
 */
function useApiErrors(deps: Deps): Plugin<YogaContext> {
  const hooks: ExecuteHooks = {
    onExecuteDone: ({ args, result, setResult }) => {
      if (Symbol.asyncIterator in result || !result.errors?.length) return;
      const requestId = args.contextValue.requestId;
      setResult({ ...result, errors: result.errors.map((error) => publicError(deps, error, requestId)) });
    },
  };
  return { onExecute: () => hooks };
}

/** Refuses `__schema`/`__type` at validation (graphql's own rule). */
const noIntrospection: Plugin<YogaContext> = {
  onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
};

/** The yoga plugins that harden `/client/graphql`: document limits, introspection, error mapping. */
export function graphqlHardening(deps: Deps, options: GraphQLOptions): Plugin<YogaContext>[] {
  return [
    EnvelopArmorPlugin<YogaContext>(GRAPHQL_LIMITS) as Plugin<YogaContext>,
    ...(options.introspection ? [] : [noIntrospection]),
    useApiErrors(deps),
  ];
}

/**
 * Hands yoga the POST body the pipeline already read through its own bounds (size, depth, JSON
 * object), instead of a second read of the stream, a second size limit and a second parse: they
 * cost about a tenth of a GraphQL request's CPU (bench/README.md, client surfaces). GET requests
 * keep yoga's own parser.
 */
const useParsedBody: Plugin<YogaContext> = {
  onRequestParse: ({ serverContext, setRequestParser }) => {
    const body = (serverContext as Partial<YogaContext> | undefined)?.body;
    if (body !== undefined) setRequestParser(() => body);
  },
};

/** An error in GraphQL's shape, with the HTTP status the widgets act on (403: fetch a new token). */
function writeGraphQLError(ex: Exchange, error: unknown, headers?: Record<string, string>): void {
  const { status, body } = trpcContractError(error);
  const code = graphqlCodeOf(status);
  const text = JSON.stringify({ errors: [{ message: body.message, extensions: { code, status } }] });
  const own: string[] = [];
  pushHeaders(own, headers);
  if (!namedIn(own, 'Content-Type')) own.push('Content-Type', 'application/json; charset=utf-8');
  writeAnswer(ex, status, own, text);
}

// What a GraphQL request costs, shared rather than made per request: one request, in one turn.
const ONE_REQUEST: Cost = { requests: 1, organizationDeletes: 0 };

/**
 * The GraphQL codec: a call needs a client or widget token, checked before its body is read
 * (POST: a JSON object, handed to yoga parsed); graphql-yoga runs it over the client schema
 * (routers/src/client-api/graphql) with the pipeline's call context (`call`, as a REST call's)
 * and the caller's scope. Refusals are in GraphQL's shape with their HTTP status; errors of the
 * execution are mapped by `useApiErrors`.
 */
export function graphqlCodec(deps: Deps, options: GraphQLOptions = { introspection: true }): Codec<Call, Response> {
  const yoga = createYoga<YogaContext>({
    schema: clientSchema(),
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: false,
    landingPage: false,
    cors: false,
    logging: false,
    maskedErrors: true,
    // The pipeline bounds the body (readJsonBody) before yoga sees it, parsed (useParsedBody).
    maxRequestBodySize: false,
    plugins: [...graphqlHardening(deps, options), useParsedBody],
  });
  return {
    surface: 'api',
    decode: (ex) => ({ cost: ONE_REQUEST, reads: ex.method === 'POST' ? 'json' : undefined, weight: 1, calls: 1 }),
    credential(ex, call, identity) {
      const known = clientOf(identity);
      if (known) {
        call.caller = known;
        return undefined;
      }
      // The authenticate step refused this token already (its held permissions read once, not twice).
      const refused = clientRefusalOf(identity);
      if (refused) return Promise.resolve(refused);
      return authenticateClientToken(deps, ex.req.headers.authorization, deviceOf(ex)).then(
        (caller) => {
          call.caller = caller;
          return undefined;
        },
        (error: unknown) => {
          if (error instanceof ApiError) return error;
          throw error;
        },
      );
    },
    dispatch(ex, call, ctx) {
      const url = `http://localhost${ex.pathname}${ex.search ? `?${ex.search}` : ''}`;
      const context: YogaContext = { call: ctx, requestId: ex.requestId, body: call.body };
      // A new headers object each time: yoga's Headers writes into the object it is given.
      const headers = { 'content-type': 'application/json', accept: ex.req.headers.accept ?? 'application/json' };
      return yoga.fetch(url, { method: ex.method, headers }, context);
    },
    async encode(ex, _call, response) {
      const text = await response.text();
      const type = response.headers.get('content-type') ?? 'application/json; charset=utf-8';
      writeAnswer(ex, response.status, ['Content-Type', type], text);
    },
    encodeError: writeGraphQLError,
  };
}
