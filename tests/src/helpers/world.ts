import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DbHandle, openDb } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import {
  createCaller,
  createEnvironment,
  createInnerContext,
  DEFAULT_TOKEN_SETTINGS,
  type Deps,
  newCaches,
} from '@atrium/routers';
import pino from 'pino';
import { inject } from 'vitest';

/** What one test worker shares: one migrated database, one set of deps, one HTTP server. */
export interface World {
  handle: DbHandle;
  deps: Deps;
  url: string;
  server: Server;
}

let world: Promise<World> | undefined;

/** The `iss` of tokens signed in tests. */
export const TEST_ISSUER = 'http://127.0.0.1';

async function build(): Promise<World> {
  const databaseUrl = inject('databaseUrl');
  const handle = await openDb(databaseUrl ? { databaseUrl, poolSize: 5 } : { dataDir: 'memory://' });
  if (!databaseUrl) await handle.migrate();
  const deps: Deps = {
    db: handle.db,
    driver: handle.driver,
    now: () => new Date(),
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    // WEBHOOKS_ALLOW_PRIVATE=true: the tests' webhook receivers listen on loopback.
    config: { apiKeyCacheTtlMs: 2_000, webhooksAllowPrivate: true },
    tokens: { ...DEFAULT_TOKEN_SETTINGS, masterKey: randomBytes(32), issuer: TEST_ISSUER },
    caches: newCaches(),
  };
  const app = createApp(deps, { baseUrl: 'http://127.0.0.1' });
  const server = createServer(app.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { handle, deps, url: `http://127.0.0.1:${port}`, server };
}

/** The worker's world, built on first use and shared by every test file of the worker. */
export function getWorld(): Promise<World> {
  world ??= build();
  return world;
}

let counter = 0;

export interface TestEnvironment {
  world: World;
  deps: Deps;
  environmentId: string;
  clientId: string;
  apiKey: string;
  /** A tRPC caller authenticated with this environment's API key. */
  caller: ReturnType<typeof createCaller>;
  /** HTTP against the worker's server with this environment's API key. */
  http: HttpClient;
}

/** A fresh environment: every test makes its own, so tests never see each other's data. */
export async function newEnvironment(options: { flags?: Record<string, boolean> } = {}): Promise<TestEnvironment> {
  const w = await getWorld();
  counter += 1;
  const created = await createEnvironment(w.deps, {
    name: `test-${process.pid}-${counter}`,
    flags: options.flags,
  });
  return {
    world: w,
    deps: w.deps,
    environmentId: created.environment_id,
    clientId: created.client_id,
    apiKey: created.api_key,
    caller: createCaller(createInnerContext(w.deps, `Bearer ${created.api_key}`)),
    http: new HttpClient(w.url, { Authorization: `Bearer ${created.api_key}` }),
  };
}

export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export class HttpClient {
  constructor(
    readonly baseUrl: string,
    readonly defaultHeaders: Record<string, string> = {},
  ) {}

  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...this.defaultHeaders, ...options.headers };
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: keep the text.
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { headers });
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { body, headers });
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, { body, headers });
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PATCH', path, { body, headers });
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, { headers });
  }
}

/** A unique, valid, non-consumer domain for a test. */
let domainCounter = 0;
export function uniqueDomain(label = 'acme'): string {
  domainCounter += 1;
  return `${label}-${process.pid}-${domainCounter}-${Date.now().toString(36)}.com`;
}
