import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DbHandle, openDb } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { createEnvironment, type Deps, ensureAdminToken, listEnvironments, newCaches } from '@atrium/routers';
import pino, { type Logger } from 'pino';
import { resolveMasterKey, type ServerConfig } from './config.ts';
import { VerificationWorker } from './workers/verification.ts';
import { WebhookWorker } from './workers/webhooks.ts';

export interface Runtime {
  deps: Deps;
  handle: DbHandle;
  server: Server;
  url: string;
  /** Secrets made on this first start, to be printed once. */
  firstRun: { adminToken?: string; environment?: { environment_id: string; client_id: string; api_key: string } };
  workers: Workers | undefined;
  close(): Promise<void>;
}

/** The background workers of one process. */
export interface Workers {
  verification: VerificationWorker;
  webhooks: WebhookWorker;
  stop(): Promise<void>;
}

/** Starts the DNS verification and webhook delivery workers on the shared dependencies. */
export function startWorkers(deps: Deps, config: ServerConfig): Workers {
  const verification = new VerificationWorker(deps, {
    servers: config.dnsServers,
    timeoutMs: config.dnsTimeoutMs,
    concurrency: config.dnsConcurrency,
    backoffBaseMs: config.dnsBackoffBaseMs,
    backoffMaxMs: config.dnsBackoffMaxMs,
  });
  const webhooks = new WebhookWorker(deps, {
    allowPrivate: config.webhooksAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
  });
  verification.start();
  webhooks.start();
  return {
    verification,
    webhooks,
    async stop() {
      await Promise.all([verification.stop(), webhooks.stop()]);
    },
  };
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'authorization', 'api_key', 'token', 'secret', '*.verification_token'],
      censor: '[redacted]',
    },
  });
}

/** Builds the dependencies shared by every request: one database handle, one clock, caches. */
export function createDeps(handle: DbHandle, config: ServerConfig, log: Logger): Deps {
  return {
    db: handle.db,
    driver: handle.driver,
    now: () => new Date(),
    log,
    config: { apiKeyCacheTtlMs: config.apiKeyCacheTtlMs, webhooksAllowPrivate: config.webhooksAllowPrivate },
    tokens: {
      masterKey: resolveMasterKey(config, (message) => log.warn(message)),
      issuer: config.publicUrl,
      rotationDelayMs: config.keyRotationDelaySeconds * 1000,
      keyCacheTtlMs: config.keyCacheSeconds * 1000,
      clientTokenTtlSeconds: config.clientTokenTtlSeconds,
      agentAccessTokenTtlSeconds: config.agentTokenTtlSeconds,
    },
    caches: newCaches(),
  };
}

/** Opens storage, applies migrations, prepares first-run secrets, and listens. */
export async function startRuntime(config: ServerConfig, log: Logger): Promise<Runtime> {
  const handle = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
  });
  await handle.migrate();
  const deps = createDeps(handle, config, log);

  const firstRun: Runtime['firstRun'] = {};
  const adminToken = await ensureAdminToken(deps, config.adminToken);
  if (adminToken) firstRun.adminToken = adminToken;
  if ((await listEnvironments(deps)).length === 0) {
    firstRun.environment = await createEnvironment(deps, { name: 'development' });
  }

  const app = createApp(deps, { baseUrl: config.publicUrl });
  const server = createServer({ keepAliveTimeout: 65_000 }, app.handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = config.publicUrl.replace(`:${config.port}`, `:${address.port}`);
  const workers = config.workers ? startWorkers(deps, config) : undefined;

  return {
    deps,
    handle,
    server,
    url,
    firstRun,
    workers,
    async close() {
      await workers?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await handle.close();
    },
  };
}
