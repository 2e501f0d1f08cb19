import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DbHandle, type Listener, openDb, ReadReplica } from '@atrium/db';
import { type AtriumApp, createApp, Metrics } from '@atrium/rest-facade';
import {
  applyInvalidation,
  configureAdminToken,
  countExpiredIdempotencyKeys,
  createEnvironment,
  type Deps,
  type GeoLocator,
  INVALIDATION_CHANNEL,
  invalidationDown,
  invalidationUp,
  listEnvironments,
  newCaches,
  sealLegacyWebhookSecrets,
} from '@atrium/routers';
import pino, { type DestinationStream, type Logger } from 'pino';
import { resolveMasterKey, type ServerConfig } from './config.ts';
import { capConnectionsPerAddress, SOCKET_IDLE_TIMEOUT_MS, serverOptions } from './connections.ts';
import { openGeoLocator } from './geo.ts';
import { createSmtpMailer } from './mailer.ts';
import { retentionWorker } from './workers/retention.ts';
import { VerificationWorker } from './workers/verification.ts';
import { WebhookWorker } from './workers/webhooks.ts';
import type { Worker } from './workers/worker.ts';

/** The admin portal's built page (server/build-portal.mjs): beside the bundle, or in server/dist from the sources. */
function portalAssetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return basename(here) === 'dist' ? join(here, 'portal') : join(here, '..', 'dist', 'portal');
}
/** console/dist, which `npm start` builds (console/build.mjs): two levels up from server/src and server/dist alike. */
const CONSOLE_DIR = fileURLToPath(new URL('../../console/dist/', import.meta.url));

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

/** Starts the DNS verification and webhook delivery workers on the shared dependencies. */
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
  verification.start();
  webhooks.start();
  return [
    { name: 'dns-verification', stop: () => verification.stop() },
    { name: 'webhook-delivery', stop: () => webhooks.stop() },
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
 * Structured JSON logs with every secret-bearing field censored, on stderr (fd 2) by default:
 * stdout carries only what main.ts prints for a person (the first-start banner and its secrets).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return pino(options, destination ?? pino.destination({ fd: 2, sync: true }));
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

/** Secrets made on a first start, to be printed once. */
export type FirstRun = {
  adminToken?: string;
  environment?: { environment_id: string; client_id: string; api_key: string };
};

/**
 * What a start does once the schema is current: seal legacy webhook secrets, register the admin
 * token, and on an empty database make the `development` environment. Under node:cluster the
 * primary does it once, before any API process starts (cluster.ts); each is idempotent anyway.
 */
export async function prepareDatabase(deps: Deps, config: ServerConfig, log: Logger): Promise<FirstRun> {
  const sealedSecrets = await sealLegacyWebhookSecrets(deps);
  if (sealedSecrets > 0) log.info({ sealedSecrets }, 'webhook secrets stored in plaintext are now encrypted');

  const firstRun: FirstRun = {};
  const adminToken = await configureAdminToken(deps, config.adminToken);
  if (adminToken.generated) firstRun.adminToken = adminToken.generated;
  if (adminToken.revoked > 0) {
    log.warn({ revoked: adminToken.revoked }, 'ATRIUM_ADMIN_TOKEN is the only admin token: revoked the others');
  }
  if ((await listEnvironments(deps)).length === 0) {
    firstRun.environment = await createEnvironment(deps, { name: 'development' });
  }

  return firstRun;
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

/** Opens storage, applies migrations, prepares first-run secrets, and listens. */
export async function startRuntime(config: ServerConfig, log: Logger): Promise<Runtime> {
  // Read first: a GEOIP_DATABASE that is not a City database stops the start before storage opens.
  const geo = config.geoipDatabase ? openGeoLocator(config.geoipDatabase) : undefined;
  const handle = await openConfiguredDb(config, log);
  if (config.migrate) await handle.migrate();
  const deps = createDeps(handle, config, log, geo);
  if (config.replica) deps.replica = await openReplica(handle, config, log);
  const listener = await listenForInvalidations(handle, deps);
  const firstRun = await prepareDatabase(deps, config, log);

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
    portalAssetsDir: portalAssetsDir(),
    graphqlIntrospection: config.graphqlIntrospection,
    corsOrigins: config.corsOrigins,
    consoleDir: CONSOLE_DIR,
  });
  // Header, request, keep-alive and idle timeouts, and the per-address cap (connections.ts says why).
  const server = createServer(serverOptions(config.http), app.handler);
  server.timeout = SOCKET_IDLE_TIMEOUT_MS;
  capConnectionsPerAddress(server, config.http.maxConnectionsPerAddress, undefined, () =>
    app.metrics.connectionsRefused.inc(),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = config.publicUrl.replace(`:${config.port}`, `:${address.port}`);
  const rateLimitWindowMs = config.rateLimit ? config.rateLimit.windowSeconds * 1000 : 60_000;
  const workers: Worker[] = [
    retentionWorker(deps, undefined, rateLimitWindowMs),
    ...(config.workers ? startWorkers(deps, config) : []),
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
