import { resolve } from 'node:path';

/** Every setting of the server, read once from the environment (see the README's table). */
export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminToken: string | undefined;
  publicUrl: string;
  logLevel: string;
  apiKeyCacheTtlMs: number;
  dbPoolSize: number;
  /** Seconds before a PostgreSQL connection attempt gives up (the request then answers 503). */
  dbConnectTimeoutSeconds: number;
  /** Milliseconds before PostgreSQL cancels a statement (the request then answers 503). */
  dbStatementTimeoutMs: number;
  /** Requests per API key per window, organization deletes per API key per window, window length. */
  rateLimit: { requests: number; organizationDeletes: number; windowSeconds: number } | false;
  /** How long SIGTERM waits for in-flight requests before closing their connections. */
  shutdownDrainMs: number;
  /** One log line per request (ACCESS_LOG=off turns it off). */
  accessLog: boolean;
}

function integer(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'.`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const port = integer('PORT', 8080, env);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.ATRIUM_DATA_DIR || './.atrium/data'),
    adminToken: env.ATRIUM_ADMIN_TOKEN || undefined,
    publicUrl: env.ATRIUM_PUBLIC_URL || `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    logLevel: env.LOG_LEVEL || 'info',
    apiKeyCacheTtlMs: integer('ATRIUM_API_KEY_CACHE_MS', 2_000, env),
    dbPoolSize: integer('DB_POOL_SIZE', 10, env),
    dbConnectTimeoutSeconds: integer('DB_CONNECT_TIMEOUT_SECONDS', 5, env),
    dbStatementTimeoutMs: integer('DB_STATEMENT_TIMEOUT_MS', 10_000, env),
    rateLimit:
      env.RATE_LIMIT === 'off'
        ? false
        : {
            requests: integer('RATE_LIMIT_REQUESTS', 6_000, env),
            organizationDeletes: integer('RATE_LIMIT_ORGANIZATION_DELETES', 50, env),
            windowSeconds: integer('RATE_LIMIT_WINDOW_SECONDS', 60, env),
          },
    shutdownDrainMs: integer('SHUTDOWN_DRAIN_MS', 8_000, env),
    accessLog: env.ACCESS_LOG !== 'off',
  };
}
