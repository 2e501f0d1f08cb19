import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  BODY_TIMEOUT_MS,
  DEFAULT_IN_FLIGHT,
  type InFlightOptions,
  MAX_RESPONSE_BYTES,
  parseTrustedProxies,
} from '@atrium/rest-facade';
import {
  ADMIN_TOKEN,
  DEFAULT_QUOTAS,
  DEFAULT_VERIFICATION_PERIOD_SECONDS,
  parseMasterKey,
  type Quotas,
} from '@atrium/routers';
import { z } from 'zod';

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
  /** ATRIUM_PUBLIC_URL, else `http://HOST:PORT`: the base of links and the `iss` of tokens. */
  publicUrl: string;
  /** Whether ATRIUM_PUBLIC_URL was set (the banner then names it beside where the server listens). */
  publicUrlConfigured: boolean;
  logLevel: string;
  /** LOG_FORMAT: `pretty` (pino-pretty) or `json` lines; unset, pretty when stderr is a terminal. */
  logFormat: 'json' | 'pretty' | undefined;
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
  /** How often the server analyzes tables that changed a lot, where no autovacuum does (`ATRIUM_STATISTICS_CHECK_SECONDS`; 0: never). */
  statisticsCheckSeconds: number;
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
  /** The clock skew allowed with an SSO identity provider (ATRIUM_SSO_CLOCK_SKEW_SECONDS, 60 s). */
  ssoClockSkewSeconds: number;
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
   * The HTTP server's bounds on a client (server/src/connections.ts says why each):
   * ATRIUM_HEADERS_TIMEOUT_MS (10 s), ATRIUM_BODY_TIMEOUT_MS (10 s, then 408),
   * ATRIUM_KEEP_ALIVE_TIMEOUT_MS (65 s) and ATRIUM_MAX_CONNECTIONS_PER_ADDRESS (256 per process; 0 = no cap).
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
  /** ATRIUM_TRUSTED_PROXIES: comma-separated addresses and CIDR ranges whose `X-Forwarded-For` is believed. */
  trustedProxies: string[];
}

// --- The configuration schema -------------------------------------------------------------
//
// Every variable is one entry of VARIABLES: its zod schema turns the raw string (or undefined)
// into a typed value with its default, and says what it expects when the value is bad. The whole
// environment is parsed at once, so every bad variable is reported together, before anything is
// opened or written. To add a variable: add its entry (and a README row), then the field of
// ServerConfig it fills in `fromVariables`.

type Raw = string | undefined;
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** Unset and empty are the same: the variable takes its default. */
const blankIsUnset = (raw: Raw): Raw => (raw === undefined || raw.trim() === '' ? undefined : raw.trim());

/** A schema of one variable: `parse` returns the value, or a string saying what was expected. */
function variable<T>(parse: (raw: Raw) => T | { expected: string }): z.ZodType<T, Raw> {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const value = parse(blankIsUnset(raw));
      if (value && typeof value === 'object' && 'expected' in value) {
        ctx.addIssue({ code: 'custom', message: value.expected });
        return z.NEVER;
      }
      return value as T;
    });
}

/** A whole number in [min, max]; unset: `fallback` (undefined when the default depends on another variable). */
function integer(fallback: number, min?: number, max?: number): z.ZodType<number, Raw>;
function integer(fallback: undefined, min?: number, max?: number): z.ZodType<number | undefined, Raw>;
function integer(fallback: number | undefined, min = 0, max = NO_LIMIT) {
  const expected = max === NO_LIMIT ? `a whole number, ${min} or more` : `a whole number from ${min} to ${max}`;
  return variable((raw) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    return /^\d+$/.test(raw) && value >= min && value <= max ? value : { expected };
  });
}

function boolean(fallback: boolean) {
  return variable((raw) => {
    if (raw === undefined) return fallback;
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    return { expected: 'true or false (also on/off, yes/no, 1/0)' };
  });
}

function oneOf<const T extends string>(values: readonly T[], fallback: T): z.ZodType<T, Raw>;
function oneOf<const T extends string>(values: readonly T[]): z.ZodType<T | undefined, Raw>;
function oneOf<const T extends string>(values: readonly T[], fallback?: T) {
  return variable((raw): T | undefined | { expected: string } => {
    if (raw === undefined) return fallback;
    return (values as readonly string[]).includes(raw) ? (raw as T) : { expected: `one of ${values.join(', ')}` };
  });
}

function text(fallback: string): z.ZodType<string, Raw>;
function text(): z.ZodType<string | undefined, Raw>;
function text(fallback?: string) {
  return variable((raw) => raw ?? fallback);
}

/** A URL whose scheme is one of `schemes` (without the colon). */
function url(schemes: string[], example: string) {
  const expected = `a URL like ${example}`;
  return variable((raw) => {
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      return schemes.includes(parsed.protocol.slice(0, -1)) && parsed.host !== '' ? raw : { expected };
    } catch {
      return { expected };
    }
  });
}

/** A comma-separated list whose every entry `valid` accepts. */
function list(valid: (entry: string) => boolean, expected: string) {
  return variable((raw) => {
    const entries = (raw ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    const bad = entries.find((entry) => !valid(entry));
    return bad === undefined ? entries : { expected: `${expected} ('${bad}' is not)` };
  });
}

/** Each entry an origin exactly as a browser sends it (scheme://host[:port], no path, no `*`). */
function isOrigin(origin: string): boolean {
  try {
    const parsed = new URL(origin);
    return /^https?:$/.test(parsed.protocol) && parsed.origin === origin && !origin.includes('*');
  } catch {
    return false;
  }
}

/** An IP address or CIDR range, as ATRIUM_TRUSTED_PROXIES takes them (ipaddr.js parses). */
function isAddressOrRange(entry: string): boolean {
  try {
    parseTrustedProxies([entry]);
    return true;
  } catch {
    return false;
  }
}

/** The server's variables that hold secrets: a report names their length, never their value. */
const SECRET = new Set(['ATRIUM_MASTER_KEY', 'ATRIUM_ADMIN_TOKEN']);
/** Variables that are URLs which may carry a password: a report masks it. */
const WITH_PASSWORD = new Set(['DATABASE_URL', 'DATABASE_REPLICA_URL', 'SMTP_URL']);

const POSTGRES_URL = url(['postgres', 'postgresql'], 'postgres://user:password@host:5432/database');

/** `domainsPerOrganization` is read from ATRIUM_QUOTA_DOMAINS_PER_ORGANIZATION, and so on. */
const quotaVariable = (name: string) => `ATRIUM_QUOTA_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
const QUOTAS = Object.fromEntries(
  Object.entries(DEFAULT_QUOTAS).map(([name, fallback]) => [quotaVariable(name), integer(fallback)]),
) as Record<`ATRIUM_QUOTA_${string}`, z.ZodType<number, Raw>>;

const VARIABLES = {
  PORT: integer(8080, 0, 65_535),
  HOST: text('127.0.0.1'),
  DATABASE_URL: POSTGRES_URL,
  DATABASE_REPLICA_URL: POSTGRES_URL,
  DATABASE_REPLICA_MAX_LAG_MS: integer(5_000),
  DATABASE_REPLICA_CHECK_MS: integer(250),
  DATABASE_REPLICA_READ_TIMEOUT_MS: integer(2_000),
  ATRIUM_DATA_DIR: text('./.atrium/data'),
  ATRIUM_ADMIN_TOKEN: variable((raw) =>
    raw === undefined || ADMIN_TOKEN.test(raw) ? raw : { expected: 'atrium_admin_ followed by 40 letters or digits' },
  ),
  ATRIUM_PUBLIC_URL: url(['http', 'https'], 'https://atrium.example.com'),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  LOG_FORMAT: oneOf(['json', 'pretty']),
  ATRIUM_API_KEY_CACHE_MS: integer(2_000),
  DB_POOL_SIZE: integer(10),
  DB_STATEMENT_CONNECTIONS: integer(2),
  ATRIUM_MASTER_KEY: variable((raw) => {
    if (raw === undefined) return undefined;
    try {
      parseMasterKey(raw);
      return raw;
    } catch (error) {
      const patterned = error instanceof Error && error.message.includes('not random');
      return {
        expected: patterned
          ? '32 random bytes, not repeated or patterned ones (generate one: openssl rand -base64 32)'
          : '32 random bytes as 64 hex digits or base64 (generate one: openssl rand -base64 32)',
      };
    }
  }),
  ATRIUM_KEY_ROTATION_DELAY_SECONDS: integer(300),
  ATRIUM_KEY_CACHE_SECONDS: integer(60),
  ATRIUM_CLIENT_TOKEN_TTL_SECONDS: integer(900),
  ATRIUM_AGENT_TOKEN_TTL_SECONDS: integer(3600),
  ATRIUM_MIGRATE: boolean(true),
  ATRIUM_PROCESSES: integer(1),
  ATRIUM_WORKERS: boolean(true),
  ATRIUM_STATISTICS_CHECK_SECONDS: integer(15),
  DNS_SERVERS: list(
    (server) => /^(\[[0-9a-f:]+\](:\d+)?|[0-9a-f:]+|[\d.]+(:\d+)?)$/i.test(server),
    'comma-separated IP addresses with optional ports (127.0.0.1:5353)',
  ),
  DNS_TIMEOUT_MS: integer(5_000),
  DNS_CONCURRENCY: integer(8),
  DNS_PER_ENVIRONMENT: integer(undefined),
  DNS_BACKOFF_BASE_MS: integer(15_000),
  DNS_BACKOFF_MAX_MS: integer(60 * 60 * 1000),
  DNS_LEASE_GRACE_MS: integer(30_000),
  DNS_VERIFICATION_PERIOD_SECONDS: integer(DEFAULT_VERIFICATION_PERIOD_SECONDS),
  ATRIUM_SSO_CLOCK_SKEW_SECONDS: integer(60, 0, 600),
  WEBHOOKS_ALLOW_PRIVATE: boolean(false),
  WEBHOOK_TIMEOUT_MS: integer(10_000),
  WEBHOOK_LEASE_GRACE_MS: integer(60_000),
  WEBHOOK_CONCURRENCY: integer(16),
  WEBHOOK_PER_ENVIRONMENT: integer(undefined),
  DB_CONNECT_TIMEOUT_SECONDS: integer(5),
  DB_STATEMENT_TIMEOUT_MS: integer(10_000),
  DB_PREPARE: boolean(true),
  RATE_LIMIT: boolean(true),
  RATE_LIMIT_REQUESTS: integer(6_000),
  RATE_LIMIT_ORGANIZATION_DELETES: integer(50),
  RATE_LIMIT_WINDOW_SECONDS: integer(60),
  RATE_LIMIT_UNAUTHENTICATED: integer(300),
  RATE_LIMIT_MAX_ADDRESSES: integer(10_000),
  RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS: integer(20_000),
  RATE_LIMIT_STORE: oneOf(['postgres', 'memory']),
  MAX_IN_FLIGHT: integer(DEFAULT_IN_FLIGHT.max),
  MAX_QUEUED: integer(DEFAULT_IN_FLIGHT.queue),
  QUEUE_TIMEOUT_MS: integer(DEFAULT_IN_FLIGHT.timeoutMs),
  MAX_RESPONSE_BYTES: integer(MAX_RESPONSE_BYTES),
  SHUTDOWN_DRAIN_MS: integer(8_000),
  ATRIUM_HEADERS_TIMEOUT_MS: integer(10_000, 1_000),
  ATRIUM_BODY_TIMEOUT_MS: integer(BODY_TIMEOUT_MS, 100),
  ATRIUM_KEEP_ALIVE_TIMEOUT_MS: integer(65_000, 1_000),
  ATRIUM_MAX_CONNECTIONS_PER_ADDRESS: integer(256),
  ACCESS_LOG: boolean(true),
  ...QUOTAS,
  SMTP_URL: variable((raw) =>
    raw === undefined || /^smtps?:\/\/[^/]+/i.test(raw)
      ? raw
      : { expected: 'smtp://[user:pass@]host[:port] or smtps://...' },
  ),
  SMTP_FROM: text(),
  SMTP_TIMEOUT_MS: integer(10_000),
  ATRIUM_INVITATION_URL: variable((raw) =>
    raw === undefined || (raw.includes('{token}') && /^https?:\/\//i.test(raw))
      ? raw
      : { expected: 'an http(s) URL containing {token}, e.g. https://app.example.com/invite?token={token}' },
  ),
  GEOIP_DATABASE: text(),
  NODE_ENV: text(),
  ATRIUM_GRAPHQL_INTROSPECTION: boolean(false),
  ATRIUM_CORS_ORIGINS: list(isOrigin, 'comma-separated exact origins like https://app.example.com'),
  ATRIUM_TRUSTED_PROXIES: list(isAddressOrRange, 'comma-separated IP addresses and CIDR ranges like 10.0.0.0/8, ::1'),
};

/** The one schema: every variable, then the rules that tie two together (checked even when others fail). */
const CONFIG = z.object(VARIABLES).superRefine(
  (v, ctx) => {
    const issue = (name: string, message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
    if (v.SMTP_URL && !v.SMTP_FROM) issue('SMTP_FROM', 'the sender with SMTP_URL, e.g. "Acme <no-reply@acme.com>"');
    if (v.DATABASE_REPLICA_URL && !v.DATABASE_URL) {
      issue('DATABASE_REPLICA_URL', 'DATABASE_URL too (a replica needs DATABASE_URL: it follows a PostgreSQL primary)');
    }
    if (v.ATRIUM_PROCESSES > 1 && !v.DATABASE_URL) {
      issue('ATRIUM_PROCESSES', '1 without DATABASE_URL (the embedded PGlite database belongs to one process)');
    }
    if (v.RATE_LIMIT_STORE === 'postgres' && !v.DATABASE_URL) {
      issue('RATE_LIMIT_STORE', 'memory without DATABASE_URL (PGlite is one process: its limits stay in memory)');
    }
  },
  { when: () => true },
);

type Variables = z.output<typeof CONFIG>;

/** Bad configuration: one line per bad variable, naming it, the shape of its value and what it expects. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Atrium cannot start: ${problems.length === 1 ? 'a setting is' : `${problems.length} settings are`} invalid (nothing was opened or written):\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

/** How a report shows a value: secrets by their length only, URLs without their password. */
function shown(name: string, raw: Raw): string {
  if (raw === undefined || raw.trim() === '') return ' (unset)';
  if (SECRET.has(name)) return ` (${raw.length} characters, not shown)`;
  let value = raw;
  if (WITH_PASSWORD.has(name)) value = value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
  if (value.length > 80) value = `${value.slice(0, 77)}...`;
  return `=${JSON.stringify(value)}`;
}

/** A server or worker on PostgreSQL decrypts what every process shares: it needs the one master key. */
const WITH_MASTER_KEY = CONFIG.superRefine(
  (v, ctx) => {
    if (v.DATABASE_URL && !v.ATRIUM_MASTER_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['ATRIUM_MASTER_KEY'],
        message: '32 random bytes with DATABASE_URL, the same in every process (generate one: openssl rand -base64 32)',
      });
    }
  },
  { when: () => true },
);

/**
 * Parses the whole environment at once; throws a ConfigError naming every bad variable.
 * `needsMasterKey` (the server and the worker, not the migrator): ATRIUM_MASTER_KEY with DATABASE_URL.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  options: { needsMasterKey?: boolean } = {},
): ServerConfig {
  const parsed = (options.needsMasterKey ? WITH_MASTER_KEY : CONFIG).safeParse(env);
  if (!parsed.success) {
    const byVariable = new Map<string, string[]>();
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '(environment)');
      byVariable.set(name, [...(byVariable.get(name) ?? []), issue.message]);
    }
    throw new ConfigError(
      [...byVariable].map(([name, messages]) => `${name}${shown(name, env[name])}: expected ${messages.join('; ')}`),
    );
  }
  return fromVariables(parsed.data);
}

/**
 * The configuration of an entry point (server, worker, migrator): on bad configuration, every
 * problem on stderr, one line each, and exit code 2, before anything is opened or written.
 */
export function loadConfigOrExit(options: { needsMasterKey: boolean }, env = process.env): ServerConfig {
  try {
    return loadConfig(env, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

/** The typed variables as the ServerConfig the rest of the server reads. */
function fromVariables(v: Variables): ServerConfig {
  const port = v.PORT;
  const host = v.HOST;
  return {
    port,
    host,
    databaseUrl: v.DATABASE_URL,
    replica:
      v.DATABASE_REPLICA_URL === undefined
        ? undefined
        : {
            url: v.DATABASE_REPLICA_URL,
            maxLagMs: v.DATABASE_REPLICA_MAX_LAG_MS,
            checkEveryMs: Math.max(10, v.DATABASE_REPLICA_CHECK_MS),
            readTimeoutMs: Math.max(1, v.DATABASE_REPLICA_READ_TIMEOUT_MS),
          },
    dataDir: resolve(v.ATRIUM_DATA_DIR),
    adminToken: v.ATRIUM_ADMIN_TOKEN,
    publicUrl: v.ATRIUM_PUBLIC_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    publicUrlConfigured: v.ATRIUM_PUBLIC_URL !== undefined,
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    apiKeyCacheTtlMs: v.ATRIUM_API_KEY_CACHE_MS,
    dbPoolSize: v.DB_POOL_SIZE,
    dbStatementConnections: Math.max(1, v.DB_STATEMENT_CONNECTIONS),
    masterKey: v.ATRIUM_MASTER_KEY,
    keyRotationDelaySeconds: v.ATRIUM_KEY_ROTATION_DELAY_SECONDS,
    keyCacheSeconds: v.ATRIUM_KEY_CACHE_SECONDS,
    clientTokenTtlSeconds: Math.min(v.ATRIUM_CLIENT_TOKEN_TTL_SECONDS, 900),
    agentTokenTtlSeconds: v.ATRIUM_AGENT_TOKEN_TTL_SECONDS,
    migrate: v.ATRIUM_MIGRATE,
    processes: Math.max(1, v.ATRIUM_PROCESSES),
    workers: v.ATRIUM_WORKERS,
    statisticsCheckSeconds: v.ATRIUM_STATISTICS_CHECK_SECONDS,
    dnsServers: v.DNS_SERVERS,
    dnsTimeoutMs: v.DNS_TIMEOUT_MS,
    dnsConcurrency: Math.max(1, v.DNS_CONCURRENCY),
    dnsPerEnvironment: Math.max(1, v.DNS_PER_ENVIRONMENT ?? Math.floor(v.DNS_CONCURRENCY / 2)),
    dnsBackoffBaseMs: v.DNS_BACKOFF_BASE_MS,
    dnsBackoffMaxMs: v.DNS_BACKOFF_MAX_MS,
    dnsLeaseGraceMs: v.DNS_LEASE_GRACE_MS,
    dnsVerificationPeriodSeconds: Math.max(1, v.DNS_VERIFICATION_PERIOD_SECONDS),
    ssoClockSkewSeconds: v.ATRIUM_SSO_CLOCK_SKEW_SECONDS,
    webhooksAllowPrivate: v.WEBHOOKS_ALLOW_PRIVATE,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
    webhookLeaseGraceMs: v.WEBHOOK_LEASE_GRACE_MS,
    webhookConcurrency: Math.max(1, v.WEBHOOK_CONCURRENCY),
    webhookPerEnvironment: Math.max(1, v.WEBHOOK_PER_ENVIRONMENT ?? Math.floor(v.WEBHOOK_CONCURRENCY / 2)),
    dbConnectTimeoutSeconds: v.DB_CONNECT_TIMEOUT_SECONDS,
    dbStatementTimeoutMs: v.DB_STATEMENT_TIMEOUT_MS,
    dbPrepare: v.DB_PREPARE,
    rateLimit: v.RATE_LIMIT && {
      requests: v.RATE_LIMIT_REQUESTS,
      organizationDeletes: v.RATE_LIMIT_ORGANIZATION_DELETES,
      windowSeconds: v.RATE_LIMIT_WINDOW_SECONDS,
      unauthenticated: v.RATE_LIMIT_UNAUTHENTICATED,
      maxAddresses: Math.max(1, v.RATE_LIMIT_MAX_ADDRESSES),
      clientOrganizationRequests: v.RATE_LIMIT_CLIENT_ORGANIZATION_REQUESTS,
    },
    rateLimitStore: v.RATE_LIMIT_STORE ?? (v.DATABASE_URL ? 'postgres' : 'memory'),
    // MAX_IN_FLIGHT=0 turns admission control off.
    inFlight: v.MAX_IN_FLIGHT > 0 && { max: v.MAX_IN_FLIGHT, queue: v.MAX_QUEUED, timeoutMs: v.QUEUE_TIMEOUT_MS },
    maxResponseBytes: Math.max(1024, v.MAX_RESPONSE_BYTES),
    http: {
      headersTimeoutMs: v.ATRIUM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: v.ATRIUM_BODY_TIMEOUT_MS,
      keepAliveTimeoutMs: v.ATRIUM_KEEP_ALIVE_TIMEOUT_MS,
      maxConnectionsPerAddress: v.ATRIUM_MAX_CONNECTIONS_PER_ADDRESS,
    },
    shutdownDrainMs: v.SHUTDOWN_DRAIN_MS,
    accessLog: v.ACCESS_LOG,
    quotas: Object.fromEntries(
      Object.keys(DEFAULT_QUOTAS).map((name) => [name, (v as unknown as Record<string, number>)[quotaVariable(name)]]),
    ) as unknown as Quotas,
    smtp: v.SMTP_URL && v.SMTP_FROM ? { url: v.SMTP_URL, from: v.SMTP_FROM, timeoutMs: v.SMTP_TIMEOUT_MS } : undefined,
    invitationUrl: v.ATRIUM_INVITATION_URL,
    geoipDatabase: v.GEOIP_DATABASE,
    // --- client surfaces (issue #22, h22/platform) ---
    graphqlIntrospection: v.NODE_ENV !== 'production' || v.ATRIUM_GRAPHQL_INTROSPECTION,
    corsOrigins: v.ATRIUM_CORS_ORIGINS,
    trustedProxies: v.ATRIUM_TRUSTED_PROXIES,
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
    throw new ConfigError([
      'ATRIUM_MASTER_KEY (unset): expected 32 random bytes with DATABASE_URL, the same in every process (generate one: openssl rand -base64 32)',
    ]);
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
