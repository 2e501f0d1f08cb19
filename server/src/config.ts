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
  /** Run the DNS verification and webhook delivery workers in this process (`ATRIUM_WORKERS`). */
  workers: boolean;
  /** `host:port` resolvers for TXT lookups (`DNS_SERVERS`, comma-separated); empty = the system's. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsConcurrency: number;
  /** Retry delays after a missed TXT check: doubling from the base up to the maximum (hourly). */
  dnsBackoffBaseMs: number;
  dnsBackoffMaxMs: number;
  webhooksAllowPrivate: boolean;
  webhookTimeoutMs: number;
  webhookConcurrency: number;
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
    workers: boolean('ATRIUM_WORKERS', true, env),
    dnsServers: dnsServers(env),
    dnsTimeoutMs: integer('DNS_TIMEOUT_MS', 5_000, env),
    dnsConcurrency: Math.max(1, integer('DNS_CONCURRENCY', 8, env)),
    dnsBackoffBaseMs: integer('DNS_BACKOFF_BASE_MS', 15_000, env),
    dnsBackoffMaxMs: integer('DNS_BACKOFF_MAX_MS', 60 * 60 * 1000, env),
    webhooksAllowPrivate: boolean('WEBHOOKS_ALLOW_PRIVATE', false, env),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, env),
    webhookConcurrency: Math.max(1, integer('WEBHOOK_CONCURRENCY', 16, env)),
  };
}
