// The one pipeline of the facade: every API request (REST, `/trpc`, `/client/graphql`, SCIM) goes
// through the same steps, defined once here and run in order; a transport is only a codec that
// decodes a call and encodes its outcome or its refusal (rest.ts, trpc.ts, graphql.ts, scim.ts).
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  ApiError,
  apiErrorOf,
  type ClientCaller,
  type Context,
  createInnerContext,
  DEFAULT_CONFIG,
  type Deps,
  serviceUnavailable,
} from '@atrium/routers';
import type { Metrics } from '../metrics.ts';
import { API_SECURITY_LIST, PAGE_SECURITY_LIST } from '../security.ts';
import {
  authenticate,
  clientOf,
  clientRefusalOf,
  deviceOf,
  elevatedAccessOf,
  environmentOf,
  type Identity,
  type Surface,
} from './authenticate.ts';
import { type BodyBounds, BodyBudgetExceeded, closesConnection, readBody, readJsonBody } from './body.ts';
import { clientAddressOf, type ProxyPredicate } from './client-address.ts';
import { consoleCredentials } from './console.ts';
import { Deadlines } from './deadline.ts';
import { beginExchange, type Exchange, idempotencyKeyOf, writeAnswer } from './exchange.ts';
import { JWKS_TEMPLATE, serveJwks } from './jwks.ts';
import { type Limits, type Refusal, shareOf as shareOfIdentity } from './limits.ts';
import { labelOf, observe } from './observe.ts';
import type { Cost } from './rate-limit.ts';
import { logFailure } from './render.ts';
import type { MatchedRoute, RouteTable } from './routes.ts';

/** What a codec decodes of a call before anything runs: its cost, how its body is read, its weight. */
export interface Call {
  /** What it counts against the rate limits: requests, organization deletes. */
  cost: Cost;
  /** How the body step reads its body: a JSON object, raw bytes (tRPC parses its own), or not at all (drained). */
  reads: 'json' | 'raw' | undefined;
  /** What it weighs against the in-flight limit (`weightOfPage`). */
  weight: number;
  /** Calls that run in one turn (a tRPC batch): more than one must fit the in-flight limit together. */
  calls: number;
  /** The JSON body the body step read (`{}` when none was sent). */
  body?: Record<string, unknown> | undefined;
  /** The raw body the body step read. */
  raw?: Buffer | undefined;
  /** A client surface's caller, once the codec's credential check verified its token. */
  caller?: ClientCaller | undefined;
}

/**
 * A transport as the pipeline sees it: how it decodes a call, which credentials it takes, how it
 * runs it, and how it encodes the outcome and every refusal. Codecs are the only renderers.
 */
export interface Codec<C extends Call = Call, R = unknown> {
  /** Which credentials the authenticate step reads (`/trpc` also takes admin tokens and the console's cookie). */
  readonly surface: Surface;
  /** The call of a request; throws the ApiError of a call refused as it stands (a batch too large). */
  decode(ex: Exchange, matched: MatchedRoute | undefined): C;
  /**
   * The refusal of a caller without the credential its call needs, checked before its body is
   * read (undefined when it passes; nothing to check: undefined, no promise).
   */
  credential?(ex: Exchange, call: C, identity: Identity | undefined): Promise<ApiError | undefined> | undefined;
  /** Runs the call in its context; its outcome, or the procedure's error thrown. */
  dispatch(ex: Exchange, call: C, ctx: Context): R | Promise<R>;
  /** Writes the outcome. */
  encode(ex: Exchange, call: C, result: R, ctx: Context): void | Promise<void>;
  /** Writes an error (any thrown value: a fault is a masked 500) in the transport's shape. */
  encodeError(ex: Exchange, error: unknown, headers?: Record<string, string>): void;
}

export interface PipelineOptions {
  deps: Deps;
  metrics: Metrics;
  /** One `info` line per request. */
  accessLog: boolean;
  routes: RouteTable;
  isTrustedProxy: ProxyPredicate;
  limits: Limits;
  /** The size and time bounds of a request body. */
  body: BodyBounds;
  /** The CORS step of the client surfaces: true when it answered (a preflight). */
  cors: (ex: Exchange) => boolean;
  /** Everything that is not an API path: the Express shell (pages.ts). */
  pages: (req: IncomingMessage, res: ServerResponse) => void;
  rest: Codec;
  trpc: Codec;
  graphql: Codec;
  /** The SCIM codec, at each directory's base URL (`/scim/v2/<directory_id>/…`). */
  scim: Codec;
  /** The SSO codec: the browser's steps of single sign-on and `POST /sso/token` (sso.ts). */
  sso: Codec;
  /** Is this one of the SSO codec's paths? */
  isSsoPath: (pathname: string) => boolean;
  /** The signed download of an audit log export's CSV (exports.ts). */
  exportDownload: Codec;
  /** Is this an audit log export's download path? */
  isExportDownloadPath: (pathname: string) => boolean;
  /** Is this path `/scim/v2` or below it? */
  isScimPath: (pathname: string) => boolean;
  /** Is this path `/trpc` or below it? */
  isTrpcPath: (pathname: string) => boolean;
  graphqlPath: string;
}

type AnyCodec = Codec<Call, unknown>;

/** The pipeline's settings, read once. */
interface Pipeline extends PipelineOptions {
  /** The calls running within `config.requestTimeoutMs` (none when it is 0: no deadline). */
  deadlines: Deadlines<Exchange, AnyCodec> | undefined;
}

const METRICS_PATH = '/metrics';
/** The metrics and log label of an export's download (without the export's id). */
const EXPORT_DOWNLOAD_LABEL = '/audit_logs/exports/{auditLogExportId}/download';
/** The metrics and log label of every SCIM request (its path names a directory and a resource id). */
const SCIM_LABEL = '/scim/v2';

/** The metrics and log label of an SSO path (a connection's paths without its id). */
function ssoLabelOf(pathname: string): string {
  const parts = pathname.split('/');
  return parts.length > 4 ? `${parts.slice(0, 4).join('/')}/{connection_id}` : pathname;
}

/** The request id step: the id every answer carries, the client's address, the URL split once. */
function requestIdStep(p: Pipeline, req: IncomingMessage, res: ServerResponse): Exchange {
  return beginExchange(req, res, clientAddressOf(req, p.isTrustedProxy));
}

/**
 * The route step: the SSO codec's paths, an export's signed download, the REST route (or 405 with `Allow`), `/trpc`, GraphQL, the JWKS (answered from
 * memory, no limit), `/metrics`, or the Express shell for every other path.
 */
function routeStep(p: Pipeline, ex: Exchange): void {
  ex.logPath = p.routes.redact(ex.pathname);
  if (p.isSsoPath(ex.pathname)) {
    observe(p.deps, p.metrics, p.accessLog, ex, ssoLabelOf(ex.pathname));
    ex.answerHeaders.push(...API_SECURITY_LIST);
    const codec = p.sso as AnyCodec;
    run(p, codec, ex, undefined).catch((error: unknown) => fail(p, codec, ex, error));
    return;
  }
  if (p.isExportDownloadPath(ex.pathname)) {
    observe(p.deps, p.metrics, p.accessLog, ex, EXPORT_DOWNLOAD_LABEL);
    ex.answerHeaders.push(...API_SECURITY_LIST);
    const codec = p.exportDownload as AnyCodec;
    run(p, codec, ex, undefined).catch((error: unknown) => fail(p, codec, ex, error));
    return;
  }
  const route = p.routes.match(ex.method, ex.pathname);
  const matched = route.kind === 'match' ? route : undefined;
  const template = matched?.template;
  const trpcCall = route.kind === 'none' && p.isTrpcPath(ex.pathname);
  const graphqlCall = route.kind === 'none' && ex.pathname === p.graphqlPath;
  const scimCall = route.kind === 'none' && !trpcCall && p.isScimPath(ex.pathname);
  observe(p.deps, p.metrics, p.accessLog, ex, scimCall ? SCIM_LABEL : labelOf(template, trpcCall, ex.pathname));
  if (p.cors(ex)) return;
  if (route.kind === 'none' && !trpcCall && !graphqlCall && !scimCall) {
    if (ex.pathname === METRICS_PATH && (ex.method === 'GET' || ex.method === 'HEAD')) {
      return void metricsPage(p, ex).catch((error: unknown) => fail(p, p.rest, ex, error));
    }
    // Express's pages set their own headers one by one: the steps' go first, the same way.
    const list = ex.answerHeaders;
    for (let i = 0; i < list.length; i += 2) ex.res.setHeader(list[i] as string, list[i + 1] as string);
    p.pages(ex.req, ex.res);
    return;
  }
  ex.answerHeaders.push(...API_SECURITY_LIST);
  if (route.kind === 'method') {
    ex.req.resume();
    const error = new ApiError(405, 'method_not_allowed', `${ex.method} is not allowed here.`);
    p.rest.encodeError(ex, error, { Allow: route.allow.join(', ') });
    return;
  }
  if (template === JWKS_TEMPLATE && ex.method === 'GET') {
    return void serveJwks(p.deps, ex).catch((error: unknown) => fail(p, p.rest, ex, error));
  }
  const codec = (scimCall ? p.scim : graphqlCall ? p.graphql : template === undefined ? p.trpc : p.rest) as AnyCodec;
  run(p, codec, ex, matched).catch((error: unknown) => fail(p, codec, ex, error));
}

/**
 * decode → identify → count → credential → body → turn (a batch as one) → context → dispatch
 * (within the deadline) → render, the turn held until the render or the deadline. Each step
 * refuses through the codec; a step that needs no wait awaits nothing (the in-memory rate limit
 * answers at once, a GET reads no body).
 */
async function run(p: Pipeline, codec: AnyCodec, ex: Exchange, matched: MatchedRoute | undefined): Promise<void> {
  const call = decodeStep(codec, ex, matched);
  if (!call) return;
  const identifying = p.limits.identify(ex, codec.surface);
  const identity = identifying && (await identifying);
  const counted = p.limits.count(identity, ex.answerHeaders, call.cost);
  const limited = counted instanceof Promise ? await counted : counted;
  if (limited) return refuse(codec, ex, limited);
  const checking = codec.credential?.(ex, call, identity);
  if (checking && (await credentialStep(codec, ex, checking))) return;
  if (call.reads === undefined) ex.req.resume();
  else if (!(await bodyStep(p, codec, ex, call))) return;
  if (batchStep(p, codec, ex, call)) return;
  const turn = await p.limits.turn(ex.res, call.weight, shareOf(identity, call));
  if ('error' in turn) {
    ex.shed = true;
    return refuse(codec, ex, turn);
  }
  // The turn is held until the call ends, whether or not its caller is still there (a caller
  // that sends and disconnects must not free a turn while its call runs), or until the deadline
  // cuts it (`pipeline`, below), whichever comes first; `release` counts only once.
  ex.turn = turn;
  try {
    const ctx = contextStep(p, ex, codec.surface, call, identity);
    await dispatchStep(p, codec, ex, call, ctx);
  } finally {
    turn.release();
  }
}

/** The decode step: the call, or undefined when it was refused (rendered here). */
function decodeStep(codec: AnyCodec, ex: Exchange, matched: MatchedRoute | undefined): Call | undefined {
  try {
    return codec.decode(ex, matched);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    ex.req.resume();
    codec.encodeError(ex, error);
    return undefined;
  }
}

/** A refusal of the limits, answered (unless its caller left) with `Retry-After`. */
function refuse(codec: AnyCodec, ex: Exchange, refusal: Refusal): void {
  ex.req.resume();
  if (!refusal.silent) codec.encodeError(ex, refusal.error, { 'Retry-After': String(refusal.retryAfter) });
}

/**
 * The credential step: a caller without the credential its call needs is refused before its
 * body is read, so it never holds a body open; the body left unread, the connection closes
 * rather than drain it. True when refused.
 */
async function credentialStep(
  codec: AnyCodec,
  ex: Exchange,
  checking: Promise<ApiError | undefined>,
): Promise<boolean> {
  const refused = await checking;
  if (!refused) return false;
  ex.req.resume();
  codec.encodeError(ex, refused, { Connection: 'close' });
  return true;
}

/**
 * The body step: read within its size and time bounds and the process's body budget, before the
 * call takes a turn (a slow body holds a socket, never a turn). A refusal of its bounds (413,
 * 408) closes the connection; one of the budget is shed load. False when refused.
 */
async function bodyStep(p: Pipeline, codec: AnyCodec, ex: Exchange, call: Call): Promise<boolean> {
  try {
    if (call.reads === 'json') call.body = await readJsonBody(ex.req, p.body, ex.res);
    else call.raw = await readBody(ex.req, p.body, ex.res);
    return true;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error instanceof BodyBudgetExceeded) {
      ex.shed = true;
      codec.encodeError(ex, error, { 'Retry-After': '1' });
      return false;
    }
    codec.encodeError(ex, error, closesConnection(error.status) ? { Connection: 'close' } : undefined);
    return false;
  }
}

/**
 * The calls of a batch take one turn together, so together they must fit the in-flight limit
 * (a single call heavier than the limit runs alone: in-flight.ts). True when refused.
 */
function batchStep(p: Pipeline, codec: AnyCodec, ex: Exchange, call: Call): boolean {
  const max = p.limits.inFlight?.options.max;
  if (max === undefined || call.calls < 2 || call.weight <= max) return false;
  ex.req.resume();
  const message = `This batch weighs ${call.weight} and at most ${max} may run at once (a page of more than 25 items weighs more than one). Send fewer calls or ask for smaller pages.`;
  codec.encodeError(ex, new ApiError(400, 'batch_too_large', message));
  return true;
}

/**
 * Whose share of the turns a call takes (limits.ts `shareOf`): its caller's environment, also
 * when only the codec's credential check verified the caller (the rate limits off).
 */
function shareOf(identity: Identity | undefined, call: Call): string {
  if (identity) return shareOfIdentity(identity);
  return call.caller ? call.caller.env.id : '';
}

/**
 * The context step: the call context every codec hands its procedures, with what the steps
 * resolved once (the API key's environment, the client token's caller, the admin token's id or
 * the console session), where the request came from, and on `/trpc` the console's cookie
 * (without `Authorization`).
 */
function contextStep(p: Pipeline, ex: Exchange, surface: Surface, call: Call, identity: Identity | undefined): Context {
  const { authorization } = ex.req.headers;
  const ctx = createInnerContext(p.deps, authorization, ex.requestId, idempotencyKeyOf(ex), environmentOf(identity));
  ctx.client = clientOf(identity) ?? call.caller;
  // A client token the authenticate step refused is refused as it stands, not checked again.
  const refused = clientRefusalOf(identity);
  if (refused) ctx.clientRefusal = refused;
  ctx.device = deviceOf(ex);
  ctx.elevatedAccess = elevatedAccessOf(ex.req);
  if (identity?.kind === 'admin' && identity.tokenId !== undefined) ctx.adminTokenId = identity.tokenId;
  if (surface === 'trpc' && !authorization) {
    const console = consoleCredentials(ex.req);
    if (console.session !== undefined) ctx.console = console;
    if (identity?.kind === 'admin' && identity.consoleSession !== undefined)
      ctx.consoleSession = identity.consoleSession;
  }
  return ctx;
}

/**
 * The dispatch, deadline and render steps: the call runs within `config.requestTimeoutMs` (cut
 * at most a tick later: deadline.ts); past it, the codec answers 503 `service_unavailable` at
 * once, the call's turn is given back, and the call's own outcome, when it comes, is dropped (the
 * outcome of a write cut off this way is unknown to the caller, as with any 503). An error of the
 * call is rendered by its codec, with the headers the procedures asked for.
 */
async function dispatchStep(p: Pipeline, codec: AnyCodec, ex: Exchange, call: Call, ctx: Context): Promise<void> {
  p.deadlines?.start(ex, codec);
  let result: unknown;
  try {
    result = await codec.dispatch(ex, call, ctx);
  } catch (error) {
    if (!p.deadlines || p.deadlines.end(ex)) fail(p, codec, ex, error, ctx.responseHeaders);
    return;
  }
  if (p.deadlines && !p.deadlines.end(ex)) return;
  return codec.encode(ex, call, result, ctx);
}

/**
 * An error no step refused on its own (a fault, a procedure's error, the deadline): rendered by
 * the codec (a 5xx logged with its cause), or the connection cut when the answer has begun.
 */
function fail(p: Pipeline, codec: AnyCodec, ex: Exchange, error: unknown, headers?: Record<string, string>): void {
  if (ex.res.headersSent) {
    ex.res.destroy();
    return;
  }
  const api = apiErrorOf(error);
  if (!api || api.status >= 500) logFailure(p.deps, error, ex);
  codec.encodeError(ex, error, headers);
}

const adminRequired = () => new ApiError(401, 'unauthorized', 'Unauthorized: a valid admin token is required.');

/**
 * `/metrics`, Prometheus's scrape, behind an admin token (the authenticate step's `admin`
 * surface), outside the limits so a scrape is answered under load too.
 */
async function metricsPage(p: Pipeline, ex: Exchange): Promise<void> {
  ex.answerHeaders.push(...PAGE_SECURITY_LIST);
  ex.req.resume();
  const identity = await authenticate(p.deps, ex, 'admin');
  if (identity.kind !== 'admin') {
    p.rest.encodeError(ex, adminRequired());
    return;
  }
  const text = await p.metrics.registry.metrics();
  writeAnswer(ex, 200, ['Content-Type', p.metrics.registry.contentType], text, ex.method === 'HEAD');
}

/**
 * The facade's listener: request id → route, then for every API request the steps of `run`,
 * off Express (whose router costs a third of the throughput, bench/README.md); everything else
 * goes to the Express shell.
 */
export function pipeline(options: PipelineOptions): RequestListener {
  const deadlineMs = options.deps.config.requestTimeoutMs ?? DEFAULT_CONFIG.requestTimeoutMs ?? 0;
  const p: Pipeline = { ...options, deadlines: undefined };
  // The deadline passed: the call's turn is given back (its call may never settle: postgres.js
  // can leave a query pending on a killed connection, porsager/postgres#1186), and 503 now,
  // logged as the request's failure.
  if (deadlineMs > 0)
    p.deadlines = new Deadlines(deadlineMs, (ex, codec) => {
      ex.turn?.release();
      fail(p, codec, ex, serviceUnavailable());
    });
  return (req, res) => routeStep(p, requestIdStep(p, req, res));
}
