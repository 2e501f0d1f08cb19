import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { type ExtractTablesWithRelations, fillPlaceholders, type SQL, sql } from 'drizzle-orm';
import { type PgDatabase, PgDialect, type PgQueryResultHKT, type PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { keepFilesPrivate, lockDataDir, makeDataDirPrivate } from './data-dir.ts';
import { type ListenCallbacks, type Listener, listenPglite, listenPostgres } from './listen.ts';
import * as schema from './schema/index.ts';
import { type RunSql, refreshStatistics } from './statistics.ts';

export type Schema = typeof schema;
type Relations = ExtractTablesWithRelations<Schema>;
/** One database type over both drivers; a transaction is usable wherever a Db is. */
export type Db = PgDatabase<PgQueryResultHKT, Schema, Relations>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, Relations>;

export type DbDriver = 'postgres' | 'pglite';

export interface DbHandle {
  db: Db;
  driver: DbDriver;
  /** Applies the committed migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /**
   * Analyzes the tables changed past autovacuum's threshold since their last analyze, where
   * nothing else does (PGlite; PostgreSQL with autovacuum off): db/src/statistics.ts. Returns them.
   */
  refreshStatistics(): Promise<string[]>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * LISTEN on `channel` (db/src/listen.ts): on PostgreSQL over a dedicated connection that
   * reconnects and listens again; on PGlite through its own notifications. Close it before the handle.
   */
  listen(channel: string, callbacks: ListenCallbacks): Promise<Listener>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** PostgreSQL connection string; when absent, embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; `memory://` (or undefined with `inMemory`) keeps nothing on disk. */
  dataDir?: string | undefined;
  /** PostgreSQL connections in all (default 10): `statementConnections` of them, the rest for transactions. */
  poolSize?: number;
  /**
   * How many of the connections carry single statements, pipelined (default 2); transactions
   * get the others (at least one). See `openPostgres`.
   */
  statementConnections?: number;
  /** Seconds before a PostgreSQL connection attempt gives up. */
  connectTimeoutSeconds?: number;
  /** Milliseconds before a PostgreSQL statement is cancelled by the server. */
  statementTimeoutMs?: number;
  /**
   * Run every statement as a named prepared statement (default true); false for a pooler that
   * cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  prepare?: boolean;
  /** Where a warning about the data directory goes (e.g. its mode was tightened). */
  warn?: (message: string) => void;
}

/**
 * The committed migrations (`db/migrations`), found through the package's resolved entry rather
 * than this module's own URL: the same path when this file runs from source (tsx, vitest) and
 * when it is bundled into `server/dist/main.mjs` (`npm start`).
 */
export const migrationsFolder = join(dirname(createRequire(import.meta.url).resolve('@atrium/db')), '..', 'migrations');

/**
 * How many migrations the database has applied (Drizzle's journal; 0 before the first). A run
 * that applied some may have created, rewritten or backfilled tables: every table is analyzed
 * then; otherwise only the stale ones (db/src/statistics.ts).
 */
async function appliedMigrations(db: Db): Promise<number> {
  const [journal] = await rawRows<{ name: string | null }>(
    db,
    sql`select to_regclass('drizzle.__drizzle_migrations')::text as name`,
  );
  if (!journal?.name) return 0;
  const [row] = await rawRows<{ n: number | string }>(db, sql`select count(*) as n from drizzle.__drizzle_migrations`);
  return Number(row?.n ?? 0);
}

/** The statistics step's way of running a statement on `db`. */
const runOn =
  (db: Db): RunSql =>
  (query) =>
    rawRows(db, query);

/** Serialises concurrent migrators (several server processes starting on one PostgreSQL). */
const MIGRATION_LOCK_KEY = 7_214_311_906;

/**
 * The postgres.js client as Drizzle should use it: every statement prepared (Drizzle prepares
 * only `.prepare(name)` queries; an unnamed statement costs two round trips and a plan each).
 * The connections plan once too (`plan_cache_mode = force_generic_plan`), so statements whose
 * best plan depends on a parameter are written not to (`equalsLiteral`), and
 * tests/src/db/generic-plans.pg.test.ts holds the hot reads to their indexes. Figures:
 * bench/README.md, "Where the design's speed comes from".
 */
export function preparingEverything(sql: postgres.Sql): postgres.Sql {
  // The trap's functions are made once per client here, not on every property read: Drizzle
  // reads `unsafe` for every statement it sends.
  const unsafe = (query: string, args?: unknown[], options?: Record<string, unknown>) =>
    sql.unsafe(
      query,
      args as postgres.ParameterOrJSON<never>[],
      options === undefined ? PREPARED : Object.assign({}, options, PREPARED),
    );
  const inTransaction = (key: 'begin' | 'savepoint') => {
    const method = Reflect.get(sql, key) as (...args: unknown[]) => Promise<unknown>;
    return (...args: unknown[]) => {
      const fn = args.pop() as (tx: postgres.Sql) => unknown;
      return method.call(sql, ...args, (tx: postgres.Sql) => fn(preparingEverything(tx)));
    };
  };
  const begin = inTransaction('begin');
  const savepoint = typeof Reflect.get(sql, 'savepoint') === 'function' ? inTransaction('savepoint') : undefined;
  return new Proxy(sql, {
    get(target, key, receiver) {
      if (key === 'unsafe') return unsafe;
      if (key === 'begin') return begin;
      if (key === 'savepoint' && savepoint) return savepoint;
      return Reflect.get(target, key, receiver);
    },
  });
}

/** The options of every statement `preparingEverything` sends (never changed by postgres.js). */
const PREPARED = Object.freeze({ prepare: true });

/** `statements` as Drizzle sees it, except that `begin` (a transaction) runs on `transactions`. */
function transactionsOn(statements: postgres.Sql, transactions: postgres.Sql): postgres.Sql {
  return new Proxy(statements, {
    get(target, key, receiver) {
      if (key === 'begin') return transactions.begin.bind(transactions);
      return Reflect.get(target, key, receiver);
    },
  });
}

export async function openDb(options: DbOptions): Promise<DbHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(options.dataDir ?? 'memory://', options.warn ?? (() => {}));
}

/** The settings of every PostgreSQL connection Atrium opens (the primary's pools and a replica's). */
export function connectionOptionsOf(options: DbOptions) {
  const prepare = options.prepare ?? true;
  return {
    prepare,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    idle_timeout: 30,
    onnotice: () => {},
    connection: {
      application_name: 'atrium',
      statement_timeout: options.statementTimeoutMs ?? 10_000,
      // Timestamps in JSON then read `...+00:00`, which the reads turn into the wire's form
      // without a Date (routers' isoOfJson); any other zone would be right, only slower.
      timezone: 'UTC',
      // Prepared statements are planned once per connection (see `preparingEverything`).
      ...(prepare ? { plan_cache_mode: 'force_generic_plan' } : {}),
    },
  } satisfies postgres.Options<Record<string, never>>;
}

/**
 * Two pools: single statements share a few connections on which postgres.js pipelines them
 * (one socket write per event-loop turn), and transactions, which hold a connection between
 * statements, get the others, so neither waits behind the other. A statement can queue behind
 * a slow one on its connection; `statement_timeout` bounds that.
 */
function openPostgres(url: string, options: DbOptions): DbHandle {
  const prepare = options.prepare ?? true;
  const total = options.poolSize ?? 10;
  const statementConnections = Math.max(1, Math.min(options.statementConnections ?? 2, total - 1));
  const connectionOptions = connectionOptionsOf(options);
  const client = postgres(url, { ...connectionOptions, max: statementConnections });
  const transactions = postgres(url, { ...connectionOptions, max: Math.max(1, total - statementConnections) });
  // Drizzle sets its own type parsers and serializers on the client it is given (timestamps and
  // json left as text for its column mappers); the transactions' client needs the same.
  drizzlePostgres(transactions);
  const routed = transactionsOn(client, transactions);
  const db = drizzlePostgres(prepare ? preparingEverything(routed) : routed, { schema }) as unknown as Db;
  return {
    db,
    driver: 'postgres',
    async migrate() {
      // One dedicated connection holds the advisory lock for the whole migration run.
      const lockClient = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
      try {
        await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        const locked = drizzlePostgres(lockClient, { schema }) as unknown as Db;
        const before = await appliedMigrations(locked);
        await migratePostgres(drizzlePostgres(lockClient, { schema }), { migrationsFolder });
        await refreshStatistics(runOn(locked), 'postgres', { all: (await appliedMigrations(locked)) !== before });
        await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
      } finally {
        await lockClient.end({ timeout: 5 });
      }
    },
    refreshStatistics: () => refreshStatistics(runOn(db), 'postgres'),
    async ping() {
      await client`select 1`;
    },
    async listen(channel, callbacks) {
      return listenPostgres(url, channel, callbacks, { connectTimeoutSeconds: options.connectTimeoutSeconds ?? 5 });
    },
    async close() {
      await Promise.all([client.end({ timeout: 5 }), transactions.end({ timeout: 5 })]);
    },
  };
}

/**
 * PGlite and its Drizzle driver are loaded only when used: importing them costs ~45 MB of RSS
 * and start-up time that a PostgreSQL deployment should not pay.
 *
 * A directory on disk is made private (0700, files 0600) and locked (`atrium.pid`) before
 * PGlite opens it: one process owns it, and a second fails here without touching the database.
 */
async function openPglite(dataDir: string, warn: (message: string) => void): Promise<DbHandle> {
  let release = () => {};
  if (!dataDir.startsWith('memory://')) {
    makeDataDirPrivate(dataDir, warn);
    release = lockDataDir(dataDir);
    // Whatever this process writes from now on is its own only (a worker thread cannot set it).
    if (isMainThread) process.umask(0o077);
  }
  try {
    const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('drizzle-orm/pglite'),
      import('drizzle-orm/pglite/migrator'),
    ]);
    const client = await PGlite.create(dataDir);
    if (!dataDir.startsWith('memory://')) keepFilesPrivate(dataDir);
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      driver: 'pglite',
      async migrate() {
        const before = await appliedMigrations(db);
        await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
        await refreshStatistics(runOn(db), 'pglite', { all: (await appliedMigrations(db)) !== before });
      },
      refreshStatistics: () => refreshStatistics(runOn(db), 'pglite'),
      async ping() {
        await client.query('select 1');
      },
      listen(channel, callbacks) {
        return listenPglite(client, channel, callbacks);
      },
      async close() {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * Something built once per database handle, such as a store's prepared statements (building a
 * Drizzle query costs more than running a short one). Kept weakly per handle; a transaction is a
 * handle of its own.
 */
export function perHandle<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let value = built.get(db);
    if (value === undefined) {
      value = build(db);
      built.set(db, value);
    }
    return value;
  };
}

/**
 * `perHandle` for a family of statements: `build(db, key)` runs once per handle and key (a
 * table, a list's shape), at the key's first use on that handle.
 */
export function perHandleAndKey<K, T>(build: (db: Db, key: K) => T): (db: Db, key: K) => T {
  const maps = perHandle(() => new Map<K, T>());
  return (db, key) => {
    const built = maps(db);
    let value = built.get(key);
    if (value === undefined) {
      value = build(db, key);
      built.set(key, value);
    }
    return value;
  };
}

/**
 * The rows of a raw SQL statement on either driver (postgres.js answers an array of rows,
 * PGlite an object holding them).
 */
export async function rawRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as T[] | { rows: T[] };
  return Array.isArray(result) ? result : result.rows;
}

/** A Drizzle builder's prepared-query arguments, as `builtOnce` captures them. */
type PrepareArgs = unknown[];
interface DrizzleInternals {
  session: unknown;
  _prepare(): unknown;
}

/**
 * A Drizzle query (select, insert, update, delete) built and rendered once with placeholders, then
 * run on any handle, a transaction's included, with Drizzle's own row mapping: each run hands the
 * rendered text to the handle's session as the builder's `.prepare()` would. `perHandle` and
 * `renderedOnce` cannot serve a transaction (a new handle each time); this can. Placeholders in
 * `where` are sent as given (pass a timestamp as ISO text); in `values`/`set` the column encodes them.
 */
export function builtOnce<K extends string, Q extends PromiseLike<unknown>>(
  names: readonly K[],
  build: (db: Db, values: Record<K, ReturnType<typeof sql.placeholder>>) => Q,
): (db: Db, values: Record<K, unknown>) => Promise<Awaited<Q>> {
  let captured: { args: PrepareArgs; joins?: unknown } | undefined;
  const placeholders = Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as unknown as Record<
    K,
    ReturnType<typeof sql.placeholder>
  >;
  return (db, values) => {
    if (!captured) {
      const query = build(db, placeholders) as unknown as DrizzleInternals;
      // The builder prepares on a recording session: what it would prepare is kept, not run.
      let args: PrepareArgs = [];
      const stub = new RecordedQuery();
      query.session = {
        prepareQuery: (...given: PrepareArgs) => {
          args = given;
          return stub;
        },
      };
      query._prepare();
      captured = { args, joins: stub.joinsNotNullableMap };
    }
    const session = (db as unknown as { session: { prepareQuery(...args: PrepareArgs): PreparedRun } }).session;
    const prepared = session.prepareQuery(...captured.args);
    if (captured.joins !== undefined) prepared.joinsNotNullableMap = captured.joins;
    return prepared.execute(values) as Promise<Awaited<Q>>;
  };
}
/** The prepared query a recording session hands the builder: it keeps what the builder sets on it. */
class RecordedQuery {
  joinsNotNullableMap: unknown = undefined;
  setToken(): this {
    return this;
  }
}
interface PreparedRun {
  joinsNotNullableMap?: unknown;
  execute(values: Record<string, unknown>): Promise<unknown>;
}

/** What `renderedOnce` keeps: the statement's text and its parameters, placeholders included. */
interface Rendered {
  sql: string;
  params: unknown[];
}

const dialect = new PgDialect();

/**
 * A raw statement whose text is rendered once: `build` gets a placeholder for each name, and each
 * run fills them and sends the text as it is, instead of Drizzle rendering it on every run. A
 * transaction runs it on its own client (its session's); a handle with neither renders it with
 * its values through Drizzle.
 */
export function renderedOnce<K extends string>(names: readonly K[], build: (values: Record<K, unknown>) => SQL) {
  let rendered: Rendered | undefined;
  const placeholders = Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as Record<K, unknown>;
  return async function run<T>(db: Db, values: Record<K, unknown>): Promise<T[]> {
    const handle = db as unknown as { $client?: unknown; session?: { client?: unknown } };
    const client = (handle.$client ?? handle.session?.client) as
      | { unsafe?: (text: string, params: unknown[], options: { prepare: boolean }) => Promise<T[]> }
      | { query?: (text: string, params: unknown[]) => Promise<{ rows: T[] }> }
      | undefined;
    if (client && 'unsafe' in client && client.unsafe) {
      rendered ??= dialect.sqlToQuery(build(placeholders));
      return client.unsafe(rendered.sql, fillPlaceholders(rendered.params, values), { prepare: true });
    }
    if (client && 'query' in client && client.query) {
      rendered ??= dialect.sqlToQuery(build(placeholders));
      return (await client.query(rendered.sql, fillPlaceholders(rendered.params, values))).rows;
    }
    return rawRows<T>(db, build(values));
  };
}
