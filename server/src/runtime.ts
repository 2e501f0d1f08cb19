import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DbHandle, type Listener, openDb, ReadReplica } from '@atrium/db';
import { type AtriumApp, createApp, Metrics } from '@atrium/rest-facade';
import {
  applyInvalidation,
  configureAdminToken,
  countExpiredIdempotencyKeys,
  createFirstRunSecrets,
  type Deps,
  type FirstRun,
  type GeoLocator,
  INVALIDATION_CHANNEL,
  invalidationDown,
  invalidationUp,
  newCaches,
  sealLegacyWebhookSecrets,
} from '@atrium/routers';
import pino, { type DestinationStream, type Logger } from 'pino';
import { ConfigError, resolveMasterKey, type ServerConfig } from './config.ts';
import { capConnectionsPerAddress, SOCKET_IDLE_TIMEOUT_MS, serverOptions } from './connections.ts';
import { openGeoLocator } from './geo.ts';
import { createSmtpMailer } from './mailer.ts';
import { auditLogExportsWorker } from './workers/audit-log-exports.ts';
import { LogStreamWorker } from './workers/log-streams.ts';
import { retentionWorker } from './workers/retention.ts';
import { samlCertificatesWorker } from './workers/saml-certificates.ts';
import { statisticsWorker } from './workers/statistics.ts';
import { VerificationWorker } from './workers/verification.ts';
import { WebhookWorker } from './workers/webhooks.ts';
import type { Worker } from './workers/worker.ts';

/** web/dist, which `npm start` builds (web/build.mjs): two levels up from server/src and server/dist alike. */
const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

export type { Worker } from './workers/worker.ts';

export interface Runtime {
  deps: Deps;
  handle: DbHandle;
  server: Server;
  app: AtriumApp;
  url: string;
  /** Background workers, stopped on shutdown after the last request and before the database. */
  workers: Worker[];
  /** Secrets made on this first start, to be printed once. */
  firstRun: FirstRun;
  close(): Promise<void>;
}

/** Starts the DNS verification, webhook and log-stream delivery workers on the shared dependencies. */
export function startWorkers(deps: Deps, config: ServerConfig): Worker[] {
  const verification = new VerificationWorker(deps, {
    servers: config.dnsServers,
    timeoutMs: config.dnsTimeoutMs,
    concurrency: config.dnsConcurrency,
    perEnvironment: config.dnsPerEnvironment,
    backoffBaseMs: config.dnsBackoffBaseMs,
    backoffMaxMs: config.dnsBackoffMaxMs,
    leaseGraceMs: config.dnsLeaseGraceMs,
  });
  const webhooks = new WebhookWorker(deps, {
    allowPrivate: config.webhooksAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    leaseGraceMs: config.webhookLeaseGraceMs,
    concurrency: config.webhookConcurrency,
    perEnvironment: config.webhookPerEnvironment,
  });
  // Log streams share the webhooks' address rule and timeout (issue #38).
  const logStreams = new LogStreamWorker(deps, {
    allowPrivate: config.webhooksAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    leaseGraceMs: config.webhookLeaseGraceMs,
  });
  verification.start();
  webhooks.start();
  logStreams.start();
  return [
    { name: 'dns-verification', stop: () => verification.stop() },
    { name: 'webhook-delivery', stop: () => webhooks.stop() },
    { name: 'log-stream-delivery', stop: () => logStreams.stop() },
    samlCertificatesWorker(deps),
    auditLogExportsWorker(deps),
  ];
}

/**
 * Secret-bearing fields, wherever they sit in a logged object (pino's paths take one `*` per
 * level, so each is listed at the depths our log lines use). Headers are never logged by the
 * facade; these paths are the net for a careless `log.info({ req })` or a logged error.
 */
const SECRET_FIELDS = [
  'authorization',
  'Authorization',
  'api_key',
  'apiKey',
  'key',
  'secret',
  'token',
  'access_token',
  'client_token',
  'jwt',
  'verification_token',
  'verificationToken',
  'webhook_secret',
  'private_key',
  'privateKey',
  'password',
  'credential',
  // An organization API key's value (its create answer, its validation request).
  'value',
  'cookie',
  'idempotency-key',
];
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'headers.cookie',
  ...SECRET_FIELDS.flatMap((field) => {
    const name = /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`;
    const dot = name.startsWith('[') ? '' : '.';
    return [name, `*${dot}${name}`, `*.*${dot}${name}`, `*.*.*${dot}${name}`];
  }),
];

/**
 * Logs with every secret-bearing field censored, on stderr (fd 2) by default: stdout carries
 * only what main.ts prints for a person (the first-start banner and its secrets). JSON lines,
 * or on a terminal (or with LOG_FORMAT=pretty) pino-pretty's readable lines.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  format: 'json' | 'pretty' | undefined = undefined,
): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (destination) return pino(options, destination);
  const pretty = format === 'pretty' || (format === undefined && process.stderr.isTTY === true);
  return pino(options, pretty ? prettyStderr() : pino.destination({ fd: 2, sync: true }));
}

/** pino-pretty, loaded only when used (a server logging JSON never pays for it). */
function prettyStderr(): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => DestinationStream;
  return pretty({ destination: 2, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/**
 * A start that failed: a setting or a port is a person's to fix, said in plain lines on stderr
 * (exit 2 for configuration, 1 for the port); anything else is logged with its error, exit 1.
 */
export function exitOnStartFailure(log: Logger, error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof ListenError) {
    process.stderr.write(`Atrium could not start: ${error.message}\n`);
    process.exit(1);
  }
  log.fatal({ err: error }, `Atrium could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** Builds the dependencies shared by every request: one database handle, one clock, caches. */
export function createDeps(handle: DbHandle, config: ServerConfig, log: Logger, geo?: GeoLocator): Deps {
  return {
    db: handle.db,
    driver: handle.driver,
    now: () => new Date(),
    log,
    config: {
      apiKeyCacheTtlMs: config.apiKeyCacheTtlMs,
      webhooksAllowPrivate: config.webhooksAllowPrivate,
      quotas: config.quotas,
      invitationUrl: config.invitationUrl,
      dnsVerificationPeriodSeconds: config.dnsVerificationPeriodSeconds,
      ssoClockSkewSeconds: config.ssoClockSkewSeconds,
      // A request outlives neither a connect attempt plus a statement, plus a little slack.
      requestTimeoutMs: config.dbStatementTimeoutMs + config.dbConnectTimeoutSeconds * 1000 + 2_000,
    },
    tokens: {
      masterKey: resolveMasterKey(config, (message) => log.warn(message)),
      issuer: config.publicUrl,
      rotationDelayMs: config.keyRotationDelaySeconds * 1000,
      keyCacheTtlMs: config.keyCacheSeconds * 1000,
      clientTokenTtlSeconds: config.clientTokenTtlSeconds,
      agentAccessTokenTtlSeconds: config.agentTokenTtlSeconds,
    },
    mailer: config.smtp ? createSmtpMailer(config.smtp) : undefined,
    geo,
    caches: newCaches(),
  };
}

/**
 * The read replica, checked once before the first request (a replica that is down then is
 * logged, and reads go to the primary until a check finds it up).
 */
async function openReplica(handle: DbHandle, config: ServerConfig, log: Logger): Promise<ReadReplica> {
  const settings = config.replica as NonNullable<ServerConfig['replica']>;
  const replica = new ReadReplica(handle.db, {
    url: settings.url,
    // Write positions are shared between the processes on this primary (NOTIFY/LISTEN).
    primaryUrl: config.databaseUrl,
    maxLagMs: settings.maxLagMs,
    checkEveryMs: settings.checkEveryMs,
    readTimeoutMs: settings.readTimeoutMs,
    connections: config.dbStatementConnections,
    connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    prepare: config.dbPrepare,
    log: (state, detail) =>
      log[state === 'up' ? 'info' : 'warn']({ replica: state, ...detail }, `read replica ${state}`),
  });
  await replica.start();
  return replica;
}

/**
 * Hears the invalidation channel (routers' invalidation/service.ts): a revoked key, a rotated
 * signing key or a flag change made by any process reaches this one's caches as it commits.
 */
export function listenForInvalidations(handle: DbHandle, deps: Deps): Promise<Listener> {
  return handle.listen(INVALIDATION_CHANNEL, {
    message: (payload) => applyInvalidation(deps, payload),
    up: () => {
      invalidationUp(deps);
      deps.log.info('listening for cache invalidations');
    },
    down: (error) => {
      invalidationDown(deps);
      deps.log.warn(
        { err: error },
        'cache invalidations not heard: caches fall back to their time bounds; reconnecting',
      );
    },
  });
}

export type { FirstRun } from '@atrium/routers';

/**
 * What a start does once the schema is current, before it listens: seal legacy webhook secrets
 * and make ATRIUM_ADMIN_TOKEN the only admin token. Under node:cluster the primary does it once,
 * before any API process starts (cluster.ts).
 */
export async function prepareDatabase(deps: Deps, config: ServerConfig, log: Logger): Promise<void> {
  const sealedSecrets = await sealLegacyWebhookSecrets(deps);
  if (sealedSecrets > 0) log.info({ sealedSecrets }, 'webhook secrets stored in plaintext are now encrypted');
  if (config.adminToken) {
    const { revoked } = await configureAdminToken(deps, config.adminToken);
    if (revoked > 0) log.warn({ revoked }, 'ATRIUM_ADMIN_TOKEN is the only admin token: revoked the others');
  }
}

/**
 * The secrets of a first start (an admin token, the `development` environment and its key),
 * made only once the server listens, so a start that cannot listen burns none of them; under a
 * lock, so of several processes starting on one empty database exactly one gets them to print.
 */
export function firstRunSecrets(deps: Deps, config: ServerConfig): Promise<FirstRun> {
  return createFirstRunSecrets(deps, { generateAdminToken: !config.adminToken });
}

/** The port is taken (EADDRINUSE) or not ours to take (EACCES): a person's fix, said in one line. */
export class ListenError extends Error {
  constructor(
    readonly code: string,
    readonly host: string,
    readonly port: number,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is in use (another Atrium, or another server?). Start on another port, e.g. PORT=${port === 8080 ? 8081 : 8080} npm start, or stop what holds it.`
        : `cannot listen on ${host}:${port} (${code}). Ports below 1024 need privileges: start on another port, e.g. PORT=8080 npm start.`,
    );
    this.name = 'ListenError';
  }
}

/** Where this process listens, as a URL a person on this host can open (an unspecified host is loopback). */
export function listeningUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** Opens the database as `config` says (PostgreSQL pools or the PGlite data directory). */
export function openConfiguredDb(config: ServerConfig, log: Logger): Promise<DbHandle> {
  return openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    statementConnections: config.dbStatementConnections,
    connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    prepare: config.dbPrepare,
    warn: (message) => log.warn(message),
  });
}

/**
 * Opens storage, applies migrations, listens, and only then makes the first-run secrets.
 * `setUp: false` (an API process under node:cluster) leaves the database set-up and the
 * first-run secrets to the primary.
 */
export async function startRuntime(
  config: ServerConfig,
  log: Logger,
  options: { setUp?: boolean } = {},
): Promise<Runtime> {
  const setUp = options.setUp ?? true;
  // Read first: a GEOIP_DATABASE that is not a City database stops the start before storage opens.
  const geo = config.geoipDatabase ? openGeoLocator(config.geoipDatabase) : undefined;
  const handle = await openConfiguredDb(config, log);
  if (config.migrate) await handle.migrate();
  const deps = createDeps(handle, config, log, geo);
  if (config.replica) deps.replica = await openReplica(handle, config, log);
  const listener = await listenForInvalidations(handle, deps);
  if (setUp) await prepareDatabase(deps, config, log);

  const metrics = new Metrics({
    defaultMetrics: true,
    dbPoolSize: config.databaseUrl ? config.dbPoolSize : 1,
    dbUp: () =>
      Promise.race([
        handle.ping().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000).unref()),
      ]).catch(() => false),
  });
  const app = createApp(deps, {
    baseUrl: config.publicUrl,
    rateLimit: config.rateLimit,
    rateLimitStore: config.rateLimitStore,
    inFlight: config.inFlight,
    maxResponseBytes: config.maxResponseBytes,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    metrics,
    accessLog: config.accessLog,
    portalAssetsDir: join(WEB_DIST, 'portal'),
    graphqlIntrospection: config.graphqlIntrospection,
    corsOrigins: config.corsOrigins,
    trustedProxies: config.trustedProxies,
    consoleDir: join(WEB_DIST, 'console'),
  });
  // Header, request, keep-alive and idle timeouts, and the per-address cap (connections.ts says why);
  // a trusted proxy carries many clients, so it is not capped as one.
  const server = createServer(serverOptions(config.http), app.handler);
  server.timeout = SOCKET_IDLE_TIMEOUT_MS;
  capConnectionsPerAddress(server, config.http.maxConnectionsPerAddress, app.isTrustedProxy, () =>
    app.metrics.connectionsRefused.inc(),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE' || error.code === 'EACCES'
            ? new ListenError(error.code, config.host, config.port)
            : error,
        ),
      );
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    await Promise.allSettled([listener.close(), deps.replica?.close()]);
    await handle.close().catch(() => {});
    throw error;
  }
  const address = server.address() as AddressInfo;
  const url = listeningUrl(config.host, address.port);
  // After listening: a start that could not listen made no secret it would never print.
  const firstRun = setUp ? await firstRunSecrets(deps, config) : {};
  const rateLimitWindowMs = config.rateLimit ? config.rateLimit.windowSeconds * 1000 : 60_000;
  const workers: Worker[] = [
    retentionWorker(deps, undefined, rateLimitWindowMs),
    ...(config.workers ? startWorkers(deps, config) : []),
    // One process per database keeps the statistics: this one, or the first of a cluster's (the one with the workers).
    ...((setUp || config.workers) && config.statisticsCheckSeconds > 0
      ? [statisticsWorker(handle, log, config.statisticsCheckSeconds * 1000)]
      : []),
  ];
  app.metrics.registerQueue('idempotency-purge', () => countExpiredIdempotencyKeys(deps));
  app.metrics.registerListening(() => listener.listening);

  let closing: Promise<void> | undefined;
  return {
    deps,
    handle,
    server,
    app,
    url,
    workers,
    firstRun,
    close() {
      closing ??= drain(server, workers, listener, handle, config.shutdownDrainMs, log, deps.replica);
      return closing;
    },
  };
}

/**
 * The shutdown order: stop accepting connections, let in-flight requests finish (at most
 * `drainMs`, then their connections are cut), stop the workers, close the database.
 */
async function drain(
  server: Server,
  workers: Worker[],
  listener: Listener,
  handle: DbHandle,
  drainMs: number,
  log: Logger,
  replica?: ReadReplica,
) {
  // Answers still to come tell keep-alive clients not to send more on this connection.
  server.on('request', (_req, res) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), drainMs);
  });
  if (await Promise.race([closed.then(() => false), timedOut])) {
    log.warn({ drainMs }, 'in-flight requests did not finish in time; closing their connections');
    server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
  await Promise.all(
    workers.map((worker) =>
      worker.stop().catch((error: unknown) => log.error({ err: error, worker: worker.name }, 'worker stop failed')),
    ),
  );
  await listener
    .close()
    .catch((error: unknown) => log.warn({ err: error }, 'closing the invalidation listener failed'));
  await Promise.all([handle.close(), replica?.close()]);
}
