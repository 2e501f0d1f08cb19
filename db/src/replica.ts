import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { connectionOptionsOf, type Db, type DbOptions, preparingEverything, rawRows } from './client.ts';
import * as schema from './schema/index.ts';

/**
 * A streaming read replica beside the primary (`DATABASE_REPLICA_URL`), and the rule that says
 * which of the two serves a read:
 *
 * - the replica, while it answers, is in recovery and lags at most `maxLagMs` behind;
 * - the primary for an API key that has written and whose last write's WAL position (the
 *   primary's `pg_current_wal_lsn()` just after the write) the replica has not yet replayed
 *   (`pg_last_wal_replay_lsn()`): read-your-writes for the writing key;
 * - the primary for everything else: writes, transactions, and reads while the replica is down
 *   or lagging.
 *
 * The per-key positions are kept in memory (at most `maxKeys`; an evicted position still holds
 * as a floor every key waits for). With `primaryUrl`, every process also learns the others'
 * positions: the statement that reads a write's position also `pg_notify`s it, and each process
 * LISTENs; while its LISTEN connection is (re)connecting, a process waits for everything the
 * primary had written. docs/scaling.md states what holds across processes.
 */
export interface ReplicaOptions extends Pick<DbOptions, 'prepare' | 'connectTimeoutSeconds' | 'statementTimeoutMs'> {
  /** The replica's connection string. */
  url: string;
  /** Connections to the replica (single statements, pipelined; default 2). */
  connections?: number;
  /** Past this lag (milliseconds; default 5,000) reads go to the primary until the replica catches up. */
  maxLagMs?: number;
  /** How often the replica's position and the primary's are compared (milliseconds; default 250). */
  checkEveryMs?: number;
  /**
   * A read on the replica that has not answered within this long (milliseconds; default 2,000)
   * is run on the primary instead, and the replica counts as down until a check finds it up.
   */
  readTimeoutMs?: number;
  /** Keys whose last write position is remembered (default 10,000). */
  maxKeys?: number;
  /**
   * The primary's connection string: with it, write positions are shared between processes
   * (NOTIFY on channel `atrium_replica_writes`, one LISTEN connection per process).
   */
  primaryUrl?: string;
  /** Where a change of the replica's state is reported (up, lagging, down). */
  log?: (state: ReplicaState, detail: Record<string, unknown>) => void;
}

export type ReplicaState = 'starting' | 'up' | 'lagging' | 'down';

/** What the metrics show: the replica's state, its lag, and who served the reads. */
export interface ReplicaStatus {
  state: ReplicaState;
  /** Seconds since the primary had written WAL the replica has not yet replayed (0 when caught up); null before the first check. */
  lagSeconds: number | null;
  /** Bytes of WAL written on the primary and not yet replayed on the replica; null before the first check. */
  lagBytes: number | null;
  /** Reads served by the replica, by the primary (and why), and replica reads retried on the primary. */
  reads: { replica: number; primary: number; readYourWrites: number; fallbacks: number };
  /** Keys whose write position is remembered now. */
  pendingKeys: number;
}

/** `16/B374D848` as a number of bytes. */
export function parseLsn(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** The channel write positions are shared on: `<key> <lsn>` per write. */
export const WRITES_CHANNEL = 'atrium_replica_writes';

/** A replica check that does not answer within this long counts as the replica being down. */
const CHECK_TIMEOUT_MS = 2_000;
/**
 * A position past any real one: a key whose write position could not be read waits for the
 * primary's position at the next check (see `compare`).
 */
const UNKNOWN = 2n ** 64n;
/** Samples of the primary's position kept to time the lag (older unreplayed ones are merged). */
const MAX_SAMPLES = 1_000;

export class ReadReplica {
  /** The replica as a Db: its reads go to the replica, `transaction` to the primary. */
  readonly db: Db;
  private readonly client: postgres.Sql;
  private readonly maxLagMs: number;
  private readonly checkEveryMs: number;
  private readonly maxKeys: number;
  /** See `ReplicaOptions.readTimeoutMs`. */
  readonly readTimeoutMs: number;
  private state: ReplicaState = 'starting';
  private replayed = -1n;
  private lagSeconds: number | null = null;
  private lagBytes: number | null = null;
  /** The primary's position at each check, oldest first, while the replica has not replayed it. */
  private samples: { at: number; lsn: bigint }[] = [];
  /** Each writing key's last write position, least recently written first. */
  private readonly written = new Map<string, bigint>();
  /** The highest position evicted from `written`: every key waits for it. */
  private floor = -1n;
  private readonly reads = { replica: 0, primary: 0, readYourWrites: 0, fallbacks: 0 };
  private timer: NodeJS.Timeout | undefined;
  private listener: postgres.Sql | undefined;
  private checking: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly primary: Db,
    private readonly options: ReplicaOptions,
  ) {
    this.maxLagMs = options.maxLagMs ?? 5_000;
    this.checkEveryMs = Math.max(10, options.checkEveryMs ?? 250);
    this.maxKeys = Math.max(1, options.maxKeys ?? 10_000);
    this.readTimeoutMs = Math.max(1, options.readTimeoutMs ?? 2_000);
    const prepare = options.prepare ?? true;
    const base = connectionOptionsOf(options);
    this.client = postgres(options.url, {
      ...base,
      connection: { ...base.connection, application_name: 'atrium-replica' },
      max: Math.max(1, options.connections ?? 2),
    });
    const replicaDb = drizzlePostgres(prepare ? preparingEverything(this.client) : this.client, {
      schema,
    }) as unknown as Db;
    // Everything in a transaction goes to the primary, whichever handle it started from.
    this.db = new Proxy(replicaDb, {
      get(target, key, receiver) {
        if (key === 'transaction') return primary.transaction.bind(primary);
        return Reflect.get(target, key, receiver);
      },
    });
  }

  /**
   * Starts the periodic check (the first one at once) and, with `primaryUrl`, the LISTEN for other
   * processes' write positions; resolves when both have started.
   */
  async start(): Promise<void> {
    this.timer = setInterval(() => void this.check(), this.checkEveryMs);
    this.timer.unref();
    if (this.options.primaryUrl) await this.listen(this.options.primaryUrl);
    await this.check();
  }

  /**
   * One LISTEN connection to the primary (postgres.js reconnects it and listens again). Each time
   * it starts listening, notifications may have been missed: every key then waits for what the
   * primary had written by then.
   */
  private async listen(url: string): Promise<void> {
    this.listener = postgres(url, {
      max: 1,
      onnotice: () => {},
      connect_timeout: this.options.connectTimeoutSeconds ?? 5,
      connection: { application_name: 'atrium-replica-writes' },
    });
    await this.listener.listen(
      WRITES_CHANNEL,
      (payload) => {
        const [key, lsn] = payload.split(' ');
        if (key && lsn && /^[0-9A-F]+\/[0-9A-F]+$/i.test(lsn)) this.remember(key, parseLsn(lsn));
      },
      () => void this.primaryPosition().then((lsn) => this.raiseFloor(lsn)),
    );
  }

  /**
   * The handle a read should use: the replica when it is up and, for a key that has written,
   * has replayed that key's last write; else the primary.
   */
  readerFor(key: string | undefined): Db {
    if (this.state !== 'up') {
      this.reads.primary += 1;
      return this.primary;
    }
    const waitFor = key === undefined ? this.floor : (this.written.get(key) ?? this.floor);
    if (waitFor > this.replayed) {
      this.reads.readYourWrites += 1;
      return this.primary;
    }
    if (key !== undefined && this.written.has(key)) this.written.delete(key);
    this.reads.replica += 1;
    return this.db;
  }

  /**
   * Called after every write by `key` (committed or not): remembers the primary's WAL position,
   * which is at or past the write's commit record. If the position cannot be read, the key reads
   * from the primary until the replica has replayed what the primary had written at the next check.
   */
  async wrote(key: string): Promise<void> {
    let lsn: bigint;
    try {
      // The position and, when shared, its notification: one statement, one round trip.
      const query = this.listener
        ? sql`select lsn::text as lsn, pg_notify(${WRITES_CHANNEL}::text, ${key}::text || ' ' || lsn::text)
            from pg_current_wal_lsn() as lsn`
        : sql`select pg_current_wal_lsn()::text as lsn`;
      const [row] = await rawRows<{ lsn: string }>(this.primary, query);
      lsn = row ? parseLsn(row.lsn) : UNKNOWN;
    } catch {
      lsn = UNKNOWN;
    }
    this.remember(key, lsn);
  }

  /** Keeps `lsn` as `key`'s position (if later than the one kept), evicting the least recent past `maxKeys`. */
  private remember(key: string, lsn: bigint): void {
    const known = this.written.get(key);
    if (known !== undefined && known >= lsn) return;
    this.written.delete(key);
    this.written.set(key, lsn);
    while (this.written.size > this.maxKeys) {
      const [oldestKey, oldest] = this.written.entries().next().value as [string, bigint];
      this.written.delete(oldestKey);
      this.raiseFloor(oldest);
    }
  }

  /** Every key waits for `lsn` (a position no longer kept per key, or one that may have been missed). */
  private raiseFloor(lsn: bigint): void {
    if (lsn > this.replayed && lsn > this.floor) this.floor = lsn;
  }

  /** The primary's WAL position now; UNKNOWN (every key waits until a check learns it) if it cannot be read. */
  private async primaryPosition(): Promise<bigint> {
    try {
      const [row] = await rawRows<{ lsn: string }>(this.primary, sql`select pg_current_wal_lsn()::text as lsn`);
      return row ? parseLsn(row.lsn) : UNKNOWN;
    } catch {
      return UNKNOWN;
    }
  }

  /** A read on the replica failed (or hung) because of the replica: it is down until a check says otherwise. */
  failed(reason: string): void {
    this.reads.fallbacks += 1;
    this.setState('down', { reason });
  }

  status(): ReplicaStatus {
    return {
      state: this.state,
      lagSeconds: this.lagSeconds,
      lagBytes: this.lagBytes,
      reads: { ...this.reads },
      pendingKeys: this.written.size,
    };
  }

  /** Runs one check now (tests use it to see a change without waiting for the timer). */
  check(): Promise<void> {
    this.checking ??= this.compare().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.checking?.catch(() => {});
    await Promise.all([this.client.end({ timeout: 5 }), this.listener?.end({ timeout: 5 })]);
  }

  /**
   * One check: the primary's position (first), then the replica's. The lag in seconds is the age
   * of the oldest primary position the replica has not replayed, so it needs no clock shared
   * between the servers and is 0 whenever the replica has caught up.
   */
  private async compare(): Promise<void> {
    if (this.closed) return;
    const at = Date.now();
    let primaryLsn: bigint;
    try {
      const [row] = await rawRows<{ lsn: string }>(this.primary, sql`select pg_current_wal_lsn()::text as lsn`);
      if (!row) return;
      primaryLsn = parseLsn(row.lsn);
    } catch {
      // The primary cannot be asked: keep the replica's last state; reads without a check still
      // follow it, and a key that has written keeps waiting for its position.
      return;
    }
    let replica: { replayed: string | null; recovering: boolean } | undefined;
    try {
      replica = await withTimeout(
        this.client<{ replayed: string | null; recovering: boolean }[]>`
          select pg_last_wal_replay_lsn()::text as replayed, pg_is_in_recovery() as recovering`.then((rows) => rows[0]),
        CHECK_TIMEOUT_MS,
      );
    } catch (error) {
      this.setState('down', { reason: (error as Error).message });
      return;
    }
    if (!replica?.recovering || replica.replayed === null) {
      // Promoted or not a standby at all: it no longer follows this primary.
      this.setState('down', { reason: 'the replica is not in recovery' });
      return;
    }
    this.replayed = parseLsn(replica.replayed);
    this.samples.push({ at, lsn: primaryLsn });
    while (this.samples.length > 0 && (this.samples[0]?.lsn ?? 0n) <= this.replayed) this.samples.shift();
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(1, 1);
    const oldest = this.samples[0];
    this.lagSeconds = oldest ? (Date.now() - oldest.at) / 1000 : 0;
    this.lagBytes = Number(primaryLsn > this.replayed ? primaryLsn - this.replayed : 0n);
    for (const [key, lsn] of this.written) {
      if (lsn <= this.replayed) this.written.delete(key);
      else if (lsn === UNKNOWN) this.written.set(key, primaryLsn);
    }
    if (this.floor === UNKNOWN) this.floor = primaryLsn;
    if (this.lagSeconds * 1000 > this.maxLagMs) this.setState('lagging', { lagSeconds: this.lagSeconds });
    else this.setState('up', { lagSeconds: this.lagSeconds });
  }

  private setState(state: ReplicaState, detail: Record<string, unknown>): void {
    if (state === 'down') {
      this.lagSeconds = null;
      this.lagBytes = null;
    }
    if (state === this.state) return;
    this.state = state;
    this.options.log?.(state, detail);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
