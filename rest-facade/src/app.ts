import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { appRouter, consumeSharedWindow, type Deps, procedureEntries } from '@atrium/routers';
import type express from 'express';
import { docsRoutes } from './docs.ts';
import { landingRoutes } from './landing.ts';
import { Metrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { BODY_BUDGET_BYTES, BODY_TIMEOUT_MS, type BodyBounds, BodyBudget, MAX_BODY_BYTES } from './pipeline/body.ts';
import { type ProxyPredicate, trustedProxies } from './pipeline/client-address.ts';
import { DEFAULT_CONSOLE_DIR } from './pipeline/console.ts';
import { corsStep } from './pipeline/cors.ts';
import { dispatchRoute } from './pipeline/dispatch.ts';
import { exportDownloadCodec, isExportDownloadPath } from './pipeline/exports.ts';
import { GRAPHQL_PATH, graphqlCodec } from './pipeline/graphql.ts';
import { DEFAULT_IN_FLIGHT, InFlightLimit, type InFlightOptions } from './pipeline/in-flight.ts';
import { Limits } from './pipeline/limits.ts';
import { pagesApp } from './pipeline/pages.ts';
import { pipeline } from './pipeline/pipeline.ts';
import { DEFAULT_RATE_LIMITS, type RateLimitOptions, RateLimits, type SharedWindows } from './pipeline/rate-limit.ts';
import { MAX_RESPONSE_BYTES } from './pipeline/render.ts';
import { restCodec } from './pipeline/rest.ts';
import { RouteTable } from './pipeline/routes.ts';
import { isScimPath, scimCodec } from './pipeline/scim.ts';
import { isSsoPath, ssoCodec } from './pipeline/sso.ts';
import { isTrpcPath, trpcCodec } from './pipeline/trpc.ts';
import { portalRoutes } from './portal.ts';

export interface AtriumApp {
  /** The node:http listener: REST paths, `/trpc` and `/client/graphql` go through the pipeline, the rest to Express. */
  handler: RequestListener;
  express: express.Express;
  /** Prometheus metrics served at `/metrics`; workers register their gauges here. */
  metrics: Metrics;
  /** The per-API-key limits, or undefined when turned off. */
  limits: RateLimits | undefined;
  /** The limit on requests running at once, or undefined when turned off. */
  inFlight: InFlightLimit | undefined;
  /** Is this socket address a trusted proxy (`trustedProxies`)? A per-address cap must not count it as one client. */
  isTrustedProxy: ProxyPredicate;
}

export interface AppOptions {
  /** Public base URL, used in the OpenAPI document. */
  baseUrl: string;
  /**
   * Limits per API key (defaults: 6,000 requests and 50 organization deletes per 60 s) and per
   * client address without valid credentials (300); false turns them off.
   */
  rateLimit?: Partial<RateLimitOptions> | false;
  /**
   * Where keys are counted: `postgres` (shared by every process on the database; the default on
   * PostgreSQL) or `memory` (this process only; the default, and the only choice, on PGlite).
   */
  rateLimitStore?: 'postgres' | 'memory';
  /** The most bytes one response body may hold (default 16 MiB). */
  maxResponseBytes?: number;
  /**
   * How long a whole request body may take to arrive (default 10 s, ATRIUM_BODY_TIMEOUT_MS):
   * past it, 408 `request_timeout` and the connection is closed. Bodies are read before a
   * request takes a turn of the in-flight limit.
   */
  bodyTimeoutMs?: number;
  /** The bytes of request bodies held at once, read and not yet answered (default 1 MiB per turn of MAX_IN_FLIGHT, at least 32 MiB; body.ts `BodyBudget`). */
  bodyBudgetBytes?: number;
  /** The metrics registry to fill (default: a new one without process metrics). */
  metrics?: Metrics;
  /** One `info` line per request (default true); off saves a write per request. */
  accessLog?: boolean;
  /** Requests running at once, waiting, and how long they wait (see in-flight.ts); false turns it off. */
  inFlight?: Partial<InFlightOptions> | false;
  /** Where the built admin-portal page bundle is (`server/dist/portal`); unset, its assets are 404. */
  portalAssetsDir?: string;
  // --- client surfaces (issue #22, h22/platform) ---
  /** `/client/graphql` answers introspection (default true; the server turns it off in production). */
  graphqlIntrospection?: boolean;
  /** Exact origins (`https://app.example.com`) whose browsers may call the client surfaces (ATRIUM_CORS_ORIGINS). */
  corsOrigins?: readonly string[];
  /** The operator console's built files (default `console/dist`, which `npm start` builds). */
  consoleDir?: string;
  /**
   * Addresses and CIDR ranges of the reverse proxies in front (ATRIUM_TRUSTED_PROXIES): only a
   * request from one of them has its `X-Forwarded-For` read for the client address
   * (client-address.ts). Default none: the socket's peer is the client.
   */
  trustedProxies?: readonly string[];
}

function limitsOf(deps: Deps, options: AppOptions, metrics: Metrics): Limits {
  const store = deps.driver === 'postgres' ? (options.rateLimitStore ?? 'postgres') : 'memory';
  const shared: SharedWindows | undefined =
    store === 'postgres'
      ? { consume: (bucket, points, windowMs) => consumeSharedWindow(deps, bucket, points, windowMs) }
      : undefined;
  const rate =
    options.rateLimit === false
      ? undefined
      : new RateLimits(Object.assign({}, DEFAULT_RATE_LIMITS, options.rateLimit), shared);
  const inFlight =
    options.inFlight === false
      ? undefined
      : new InFlightLimit(Object.assign({}, DEFAULT_IN_FLIGHT, options.inFlight), (reason) =>
          metrics.shed.inc({ reason }),
        );
  if (inFlight) metrics.registerInFlight(() => inFlight.load);
  return new Limits(deps, rate, inFlight);
}

/**
 * The facade: one pipeline (pipeline.ts) whose steps every API request goes through, REST paths,
 * `/trpc` and `/client/graphql` alike, each a codec (rest.ts, trpc.ts, graphql.ts); everything
 * else goes to the Express shell.
 */
export function createApp(deps: Deps, options: AppOptions): AtriumApp {
  const document = buildOpenApiDocument(options.baseUrl);
  const metrics = options.metrics ?? new Metrics();
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const limits = limitsOf(deps, options, metrics);
  const body: BodyBounds = {
    limit: MAX_BODY_BYTES,
    timeoutMs: options.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
    // What the running requests' bodies held when they were read in their turn: a MiB per turn.
    budget: new BodyBudget(
      options.bodyBudgetBytes ?? Math.max(BODY_BUDGET_BYTES, (limits.inFlight?.options.max ?? 0) * MAX_BODY_BYTES),
      () => metrics.shed.inc({ reason: 'body_budget' }),
    ),
  };
  const replica = deps.replica;
  if (replica) metrics.registerReplica(() => replica.status());
  const routes = new RouteTable(procedureEntries(appRouter));
  const deleteRoute = routes.routeOf('organizations.delete');
  const isTrustedProxy = trustedProxies(options.trustedProxies ?? []);
  const pages = pagesApp(deps, document, options.baseUrl, { console: options.consoleDir ?? DEFAULT_CONSOLE_DIR }, [
    landingRoutes(),
    docsRoutes(options.baseUrl),
    // The self-serve admin portal (issue #23).
    portalRoutes(deps, options.portalAssetsDir),
  ]);
  const handler = pipeline({
    deps,
    metrics,
    accessLog: options.accessLog ?? true,
    routes,
    isTrustedProxy,
    limits,
    body,
    cors: corsStep(options.corsOrigins ?? []),
    pages: pages as unknown as (req: IncomingMessage, res: ServerResponse) => void,
    rest: restCodec({
      deps,
      dispatch: dispatchRoute,
      maxResponseBytes,
      isOrganizationDelete: (method, template) => method === deleteRoute?.method && template === deleteRoute.template,
    }),
    trpc: trpcCodec(deps, maxResponseBytes, body.limit),
    graphql: graphqlCodec(deps, { introspection: options.graphqlIntrospection ?? true }),
    scim: scimCodec(deps, maxResponseBytes),
    isScimPath,
    sso: ssoCodec(deps),
    isSsoPath,
    exportDownload: exportDownloadCodec(deps),
    isExportDownloadPath,
    isTrpcPath,
    graphqlPath: GRAPHQL_PATH,
  });

  return { handler, express: pages, metrics, limits: limits.rate, inFlight: limits.inFlight, isTrustedProxy };
}
