import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BODY_TIMEOUT_MS, DEFAULT_IN_FLIGHT, type InFlightOptions, MAX_RESPONSE_BYTES } from '@atrium/rest-facade';
import { DEFAULT_QUOTAS, DEFAULT_VERIFICATION_PERIOD_SECONDS, parseMasterKey, type Quotas } from '@atrium/routers';

/** Every setting of the server, read once from the environment (see the README's table). */
export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /**
   * A streaming replica of DATABASE_URL (DATABASE_REPLICA_URL): API reads go to it while it lags
   * less than `maxLagMs` (DATABASE_REPLICA_MAX_LAG_MS), checked every `checkEveryMs`
   * (DATABASE_REPLICA_CHECK_MS); a read it has not answered within `readTimeoutMs`
   * (DATABASE_REPLICA_READ_TIMEOUT_MS) runs on the primary.
   */
  replica: { url: string; maxLagMs: number; checkEveryMs: number; readTimeoutMs: number } | undefined;
  dataDir: string;
  adminToken: string | undefined;
  publicUrl: string;
  logLevel: string;
  apiKeyCacheTtlMs: number;
  dbPoolSize: number;
  /** How many of the `dbPoolSize` connections carry single statements, pipelined; the rest transactions. */
  dbStatementConnections: number;
  /** ATRIUM_MASTER_KEY (32 bytes, hex or base64); see `resolveMasterKey`. */
  masterKey: string | undefined;
  /** ATRIUM_KEY_ROTATION_DELAY_SECONDS: how long a rotated-in key waits before it signs. */
  keyRotationDelaySeconds: number;
  /** ATRIUM_KEY_CACHE_SECONDS: how long a process serves signing keys from memory. */
  keyCacheSeconds: number;
  /** ATRIUM_CLIENT_TOKEN_TTL_SECONDS (at most 900). */
  clientTokenTtlSeconds: number;
  /** ATRIUM_AGENT_TOKEN_TTL_SECONDS. */
  agentTokenTtlSeconds: number;
  /** Apply the migrations at start (`ATRIUM_MIGRATE`, default true); false when `npm run migrate` does it once per release. */
  migrate: boolean;
  /** API processes on the one port (`ATRIUM_PROCESSES`, default 1; more run under node:cluster, server/src/cluster.ts). */
  processes: number;
  /** Run the DNS verification and webhook delivery workers in this process (`ATRIUM_WORKERS`). */
  workers: boolean;
  /** `host:port` resolvers for TXT lookups (`DNS_SERVERS`, comma-separated); empty = the system's. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsConcurrency: number;
  /** DNS lookups one environment may hold of `dnsConcurrency` (default half): the rest serve other tenants. */
  dnsPerEnvironment: number;
  /** Retry delays after a missed TXT check: doubling from the base up to the maximum (hourly). */
  dnsBackoffBaseMs: number;
  dnsBackoffMaxMs: number;
  /** How long past its lookups a DNS check's lease lasts (a dead worker's check waits that long). */
  dnsLeaseGraceMs: number;
  /** How long a pending domain may go without a successful check before it fails (DNS_VERIFICATION_PERIOD_SECONDS, 30 days). */
  dnsVerificationPeriodSeconds: number;
  webhooksAllowPrivate: boolean;
  webhookTimeoutMs: number;
  /** How long past its timeout a delivery attempt's lease lasts (a dead worker's job waits that long). */
  webhookLeaseGraceMs: number;
  webhookConcurrency: number;
  /** Delivery attempts one environment may hold of `webhookConcurrency` (default half). */
  webhookPerEnvironment: number;
  /** Seconds before a PostgreSQL connection attempt gives up (the request then answers 503). */
  dbConnectTimeoutSeconds: number;
  /** Milliseconds before PostgreSQL cancels a statement (the request then answers 503). */
  dbStatementTimeoutMs: number;
  /** Every statement a named prepared statement (DB_PREPARE, default true; false for PgBouncer in transaction mode). */
  dbPrepare: boolean;
  /**
   * Requests per API key per window, organization deletes per API key per window, window length,
   * requests per client address whose credentials are missing or fail, and addresses counted at once.
   */
  rateLimit:
    | {
        requests: number;
        organizationDeletes: number;
        windowSeconds: number;
        unauthenticated: number;
        maxAddresses: number;
        /** RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS: per organization over client and widget tokens. */
        clientOrganizationRequests: number;
      }
    | false;
  /** Where API keys are counted (RATE_LIMIT_STORE): `postgres` (shared; default with DATABASE_URL) or `memory`. */
  rateLimitStore: 'postgres' | 'memory';
  /** API requests running at once (MAX_IN_FLIGHT, 0 = no limit), waiting (MAX_QUEUED), and for how long (QUEUE_TIMEOUT_MS). */
  inFlight: InFlightOptions | false;
  /** The most bytes one response body may hold (MAX_RESPONSE_BYTES, default 16 MiB); larger is 413. */
  maxResponseBytes: number;
  /**
   * The HTTP server's bounds on a client (runtime.ts says why each): ATRIUM_HEADERS_TIMEOUT_MS
   * (10 s), ATRIUM_BODY_TIMEOUT_MS (10 s, then 408), ATRIUM_KEEP_ALIVE_TIMEOUT_MS (65 s) and
   * ATRIUM_MAX_CONNECTIONS_PER_ADDRESS (256 per process; 0 = no cap).
   */
  http: {
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxConnectionsPerAddress: number;
  };
  /** How long SIGTERM waits for in-flight requests before closing their connections. */
  shutdownDrainMs: number;
  /** One log line per request (ACCESS_LOG=off turns it off). */
  accessLog: boolean;
  /** Per-tenant limits, each `ATRIUM_QUOTA_<NAME>` (e.g. ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION). */
  quotas: Quotas;
  /** Outgoing mail (SMTP_URL, SMTP_FROM, SMTP_TIMEOUT_MS): unset, invitations are stored and evented, not mailed. */
  smtp: { url: string; from: string; timeoutMs: number } | undefined;
  /** ATRIUM_INVITATION_URL: the accept link of invitations, `{token}` standing for the token. */
  invitationUrl: string | undefined;
  /** GEOIP_DATABASE: a MaxMind DB city database (GeoLite2-City.mmdb) locating sessions; unset, none are. */
  geoipDatabase: string | undefined;
  // --- client surfaces (issue #22, h22/platform) ---
  /** `/client/graphql` introspection: on unless NODE_ENV=production, where ATRIUM_GRAPHQL_INTROSPECTION=1 turns it on. */
  graphqlIntrospection: boolean;
  /** ATRIUM_CORS_ORIGINS: comma-separated exact origins whose browsers may call `/_widgets`, `/client/graphql`, `/trpc/client.*`. */
  corsOrigins: string[];
}

function integer(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'.`);
  return value;
}

function boolean(name: string, fallback: boolean, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got '${raw}'.`);
}

function dnsServers(env: NodeJS.ProcessEnv): string[] {
  const servers = (env.DNS_SERVERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const server of servers) {
    if (!/^(\[[0-9a-f:]+\](:\d+)?|[0-9a-f:]+|[\d.]+(:\d+)?)$/i.test(server)) {
      throw new Error(`DNS_SERVERS takes IP addresses with optional ports (127.0.0.1:5353), got '${server}'.`);
    }
  }
  return servers;
}

/** Checked with the rest of the configuration: a bad key stops the server before it opens any storage. */
function checkedMasterKey(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  parseMasterKey(raw);
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const port = integer('PORT', 8080, env);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    replica: replica(env),
    dataDir: resolve(env.ATRIUM_DATA_DIR || './.atrium/data'),
    adminToken: env.ATRIUM_ADMIN_TOKEN || undefined,
    publicUrl: env.ATRIUM_PUBLIC_URL || `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    logLevel: env.LOG_LEVEL || 'info',
    apiKeyCacheTtlMs: integer('ATRIUM_API_KEY_CACHE_MS', 2_000, env),
    dbPoolSize: integer('DB_POOL_SIZE', 10, env),
    dbStatementConnections: Math.max(1, integer('DB_STATEMENT_CONNECTIONS', 2, env)),
    masterKey: checkedMasterKey(env.ATRIUM_MASTER_KEY),
    keyRotationDelaySeconds: integer('ATRIUM_KEY_ROTATION_DELAY_SECONDS', 300, env),
    keyCacheSeconds: integer('ATRIUM_KEY_CACHE_SECONDS', 60, env),
    clientTokenTtlSeconds: Math.min(integer('ATRIUM_CLIENT_TOKEN_TTL_SECONDS', 900, env), 900),
    agentTokenTtlSeconds: integer('ATRIUM_AGENT_TOKEN_TTL_SECONDS', 3600, env),
    migrate: boolean('ATRIUM_MIGRATE', true, env),
    processes: Math.max(1, integer('ATRIUM_PROCESSES', 1, env)),
    workers: boolean('ATRIUM_WORKERS', true, env),
    dnsServers: dnsServers(env),
    dnsTimeoutMs: integer('DNS_TIMEOUT_MS', 5_000, env),
    dnsConcurrency: Math.max(1, integer('DNS_CONCURRENCY', 8, env)),
    dnsPerEnvironment: Math.max(
      1,
      integer('DNS_PER_ENVIRONMENT', Math.floor(integer('DNS_CONCURRENCY', 8, env) / 2), env),
    ),
    dnsBackoffBaseMs: integer('DNS_BACKOFF_BASE_MS', 15_000, env),
    dnsBackoffMaxMs: integer('DNS_BACKOFF_MAX_MS', 60 * 60 * 1000, env),
    dnsLeaseGraceMs: integer('DNS_LEASE_GRACE_MS', 30_000, env),
    dnsVerificationPeriodSeconds: Math.max(
      1,
      integer('DNS_VERIFICATION_PERIOD_SECONDS', DEFAULT_VERIFICATION_PERIOD_SECONDS, env),
    ),
    webhooksAllowPrivate: boolean('WEBHOOKS_ALLOW_PRIVATE', false, env),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, env),
    webhookLeaseGraceMs: integer('WEBHOOK_LEASE_GRACE_MS', 60_000, env),
    webhookConcurrency: Math.max(1, integer('WEBHOOK_CONCURRENCY', 16, env)),
    webhookPerEnvironment: Math.max(
      1,
      integer('WEBHOOK_PER_ENVIRONMENT', Math.floor(integer('WEBHOOK_CONCURRENCY', 16, env) / 2), env),
    ),
    dbConnectTimeoutSeconds: integer('DB_CONNECT_TIMEOUT_SECONDS', 5, env),
    dbStatementTimeoutMs: integer('DB_STATEMENT_TIMEOUT_MS', 10_000, env),
    dbPrepare: boolean('DB_PREPARE', true, env),
    rateLimit:
      env.RATE_LIMIT === 'off'
        ? false
        : {
            requests: integer('RATE_LIMIT_REQUESTS', 6_000, env),
            organizationDeletes: integer('RATE_LIMIT_ORGANIZATION_DELETES', 50, env),
            windowSeconds: integer('RATE_LIMIT_WINDOW_SECONDS', 60, env),
            unauthenticated: integer('RATE_LIMIT_UNAUTHENTICATED', 300, env),
            maxAddresses: Math.max(1, integer('RATE_LIMIT_MAX_ADDRESSES', 10_000, env)),
            clientOrganizationRequests: integer('RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS', 20_000, env),
          },
    rateLimitStore: rateLimitStore(env),
    inFlight: inFlight(env),
    maxResponseBytes: Math.max(1024, integer('MAX_RESPONSE_BYTES', MAX_RESPONSE_BYTES, env)),
    http: {
      headersTimeoutMs: Math.max(1_000, integer('ATRIUM_HEADERS_TIMEOUT_MS', 10_000, env)),
      bodyTimeoutMs: Math.max(100, integer('ATRIUM_BODY_TIMEOUT_MS', BODY_TIMEOUT_MS, env)),
      keepAliveTimeoutMs: Math.max(1_000, integer('ATRIUM_KEEP_ALIVE_TIMEOUT_MS', 65_000, env)),
      maxConnectionsPerAddress: integer('ATRIUM_MAX_CONNECTIONS_PER_ADDRESS', 256, env),
    },
    shutdownDrainMs: integer('SHUTDOWN_DRAIN_MS', 8_000, env),
    accessLog: env.ACCESS_LOG !== 'off',
    quotas: quotas(env),
    smtp: smtp(env),
    invitationUrl: invitationUrl(env),
    geoipDatabase: env.GEOIP_DATABASE?.trim() || undefined,
    // --- client surfaces (issue #22, h22/platform) ---
    graphqlIntrospection: env.NODE_ENV !== 'production' || boolean('ATRIUM_GRAPHQL_INTROSPECTION', false, env),
    corsOrigins: corsOrigins(env),
  };
}

/** Each entry an origin exactly as a browser sends it (scheme://host[:port], no path, no `*`). */
function corsOrigins(env: NodeJS.ProcessEnv): string[] {
  const origins = (env.ATRIUM_CORS_ORIGINS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {}
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin || origin.includes('*')) {
      throw new Error(`ATRIUM_CORS_ORIGINS takes exact origins like https://app.example.com, got '${origin}'.`);
    }
  }
  return origins;
}

/** SMTP_URL (`smtp://` or `smtps://`) needs SMTP_FROM: a mail without a sender is refused by most relays. */
function smtp(env: NodeJS.ProcessEnv): ServerConfig['smtp'] {
  const url = env.SMTP_URL;
  if (!url) return undefined;
  if (!/^smtps?:\/\/[^/]+/i.test(url)) throw new Error('SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://….');
  const from = env.SMTP_FROM;
  if (!from) throw new Error('SMTP_FROM (the sender, e.g. "Acme <no-reply@acme.com>") is required with SMTP_URL.');
  return { url, from, timeoutMs: integer('SMTP_TIMEOUT_MS', 10_000, env) };
}

function invitationUrl(env: NodeJS.ProcessEnv): string | undefined {
  const template = env.ATRIUM_INVITATION_URL;
  if (!template) return undefined;
  if (!template.includes('{token}') || !/^https?:\/\//i.test(template)) {
    throw new Error(`ATRIUM_INVITATION_URL must be an http(s) URL containing {token}, got '${template}'.`);
  }
  return template;
}

function replica(env: NodeJS.ProcessEnv): ServerConfig['replica'] {
  const url = env.DATABASE_REPLICA_URL || undefined;
  if (!url) return undefined;
  if (!env.DATABASE_URL)
    throw new Error('DATABASE_REPLICA_URL needs DATABASE_URL: the replica follows a PostgreSQL primary.');
  return {
    url,
    maxLagMs: integer('DATABASE_REPLICA_MAX_LAG_MS', 5_000, env),
    checkEveryMs: Math.max(10, integer('DATABASE_REPLICA_CHECK_MS', 250, env)),
    readTimeoutMs: Math.max(1, integer('DATABASE_REPLICA_READ_TIMEOUT_MS', 2_000, env)),
  };
}

/** `domainsPerOrganization` is read from ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION, and so on. */
function quotas(env: NodeJS.ProcessEnv): Quotas {
  const entries = Object.entries(DEFAULT_QUOTAS).map(([name, fallback]) => {
    const variable = `ATRIUM_QUOTA_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
    return [name, integer(variable, fallback, env)];
  });
  return Object.fromEntries(entries) as unknown as Quotas;
}

function rateLimitStore(env: NodeJS.ProcessEnv): ServerConfig['rateLimitStore'] {
  const raw = env.RATE_LIMIT_STORE || (env.DATABASE_URL ? 'postgres' : 'memory');
  if (raw !== 'postgres' && raw !== 'memory')
    throw new Error(`RATE_LIMIT_STORE must be postgres or memory, got '${raw}'.`);
  if (raw === 'postgres' && !env.DATABASE_URL) {
    throw new Error('RATE_LIMIT_STORE=postgres needs DATABASE_URL (PGlite is one process: its limits stay in memory).');
  }
  return raw;
}

/** MAX_IN_FLIGHT=0 turns the limit off; the defaults are the facade's `DEFAULT_IN_FLIGHT`. */
function inFlight(env: NodeJS.ProcessEnv): ServerConfig['inFlight'] {
  const max = integer('MAX_IN_FLIGHT', DEFAULT_IN_FLIGHT.max, env);
  if (max === 0) return false;
  return {
    max,
    queue: integer('MAX_QUEUED', DEFAULT_IN_FLIGHT.queue, env),
    timeoutMs: integer('QUEUE_TIMEOUT_MS', DEFAULT_IN_FLIGHT.timeoutMs, env),
  };
}

/**
 * The master key that encrypts private signing keys. ATRIUM_MASTER_KEY wins; it is required
 * with DATABASE_URL (every process must share it). On the embedded default without one, a key
 * is generated once into `<data dir>/master.key` (mode 0600) and a warning is logged.
 */
export function resolveMasterKey(
  config: Pick<ServerConfig, 'masterKey' | 'databaseUrl' | 'dataDir'>,
  warn: (message: string) => void,
): Buffer {
  if (config.masterKey) return parseMasterKey(config.masterKey);
  if (config.databaseUrl) {
    throw new Error('ATRIUM_MASTER_KEY is required with DATABASE_URL (generate one with: openssl rand -base64 32).');
  }
  const file = join(config.dataDir, 'master.key');
  if (existsSync(file)) return parseMasterKey(readFileSync(file, 'utf8'));
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  warn(
    `ATRIUM_MASTER_KEY is not set: generated one into ${file} (mode 0600). Back it up; set ATRIUM_MASTER_KEY in production.`,
  );
  return parseMasterKey(readFileSync(file, 'utf8'));
}
