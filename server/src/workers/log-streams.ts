import {
  type AuditLogStreamRow,
  type Deps,
  prepareBatch,
  type StreamAttemptResult,
  settleBatch,
  takeDueStreams,
} from '@atrium/routers';
import { sendGuarded } from './guarded-http.ts';
import { TickLoop } from './loop.ts';

export interface LogStreamWorkerOptions {
  /** Deliver to private, loopback and link-local addresses (`WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivate?: boolean;
  /** Per-attempt timeout (the whole request). */
  timeoutMs?: number;
  /** How long past the timeout a taken stream stays leased (a worker that dies holds it that long). */
  leaseGraceMs?: number;
  /** Streams in flight at once. */
  concurrency?: number;
  /** Streams of one environment in flight at once (half the concurrency). */
  perEnvironment?: number;
  /** Events per batch (one request, one object). */
  batchSize?: number;
  /** How long a stream with nothing to deliver waits before it is looked at again. */
  idleMs?: number;
  intervalMs?: number;
  /** The webhooks' backoff: first retry delay, doubling per attempt up to `retryMaxMs`, with jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The webhooks' budget: an event still undelivered this long after it was recorded puts the stream in `error`. */
  maxAgeMs?: number;
  /** Extra trusted certificate authorities (PEM), for a test's self-signed receiver. */
  ca?: string;
  now?: () => Date;
  random?: () => number;
  /** Only these environments' streams (tests; a deployment leaves it unset). */
  environmentId?: string | string[];
}

/**
 * The log-stream worker (issue #38): each tick takes due active streams round-robin by
 * environment (leased, SKIP LOCKED, so one stream has one batch in flight across all workers), and
 * for each sends the next batch of its organization's audit log events after its cursor, in commit
 * order, to its destination through the guarded HTTP client of the webhooks; the cursor moves
 * only when the destination accepted the batch. Retries, budget and the address rule are the
 * webhooks'.
 */
export class LogStreamWorker {
  private readonly now: () => Date;
  private readonly random: () => number;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  private readonly leaseGraceMs: number;
  private readonly concurrency: number;
  private readonly perEnvironment: number;
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxAgeMs: number;
  private readonly ca: string | undefined;
  private readonly environments: string[] | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly loop: TickLoop;
  private cursor = '';

  constructor(
    private readonly deps: Deps,
    options: LogStreamWorkerOptions = {},
  ) {
    this.now = options.now ?? deps.now;
    this.random = options.random ?? Math.random;
    this.allowPrivate = options.allowPrivate ?? false;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseGraceMs = options.leaseGraceMs ?? 60_000;
    this.concurrency = options.concurrency ?? 8;
    this.perEnvironment = Math.max(1, options.perEnvironment ?? Math.floor(this.concurrency / 2));
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.idleMs = options.idleMs ?? 5_000;
    this.retryBaseMs = options.retryBaseMs ?? 30_000;
    this.retryMaxMs = options.retryMaxMs ?? 6 * 60 * 60 * 1000;
    this.maxAgeMs = options.maxAgeMs ?? 3 * 24 * 60 * 60 * 1000;
    this.ca = options.ca;
    this.environments =
      options.environmentId === undefined ? undefined : ([] as string[]).concat(options.environmentId);
    this.loop = new TickLoop(
      async () => (await this.tick()) > 0 && this.inFlight.size < this.concurrency,
      options.intervalMs ?? 1_000,
      (error) => deps.log.error({ err: error }, 'log stream tick failed'),
    );
  }

  /** The webhooks' delay before the next attempt after `attempts` failures: doubling, capped, jittered. */
  retryDelayMs(attempts: number): number {
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** Takes due streams and starts one batch each; returns how many were taken. `drain()` waits for them. */
  async tick(): Promise<number> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const now = this.now();
    const taken = await takeDueStreams(this.deps, now, free, this.timeoutMs + this.leaseGraceMs, {
      perEnvironment: this.perEnvironment,
      cursor: this.cursor,
      environments: this.environments,
    });
    this.cursor = taken.cursor;
    for (const stream of taken.streams) {
      const attempt = this.attempt(stream).finally(() => this.inFlight.delete(stream.id));
      this.inFlight.set(stream.id, attempt);
    }
    return taken.streams.length;
  }

  private async attempt(stream: AuditLogStreamRow): Promise<void> {
    try {
      const attemptedAt = this.now();
      const batch = await prepareBatch(this.deps, stream, {
        maxEvents: this.batchSize,
        now: attemptedAt,
        idleUntil: new Date(attemptedAt.getTime() + this.idleMs),
      });
      if (!batch) return;
      const outcome = await sendGuarded(batch.request, {
        timeoutMs: this.timeoutMs,
        allowPrivate: this.allowPrivate,
        ca: this.ca,
      });
      const result: StreamAttemptResult = await settleBatch(this.deps, stream, batch.events, outcome, this.now(), {
        retryDelayMs: (attempts) => this.retryDelayMs(attempts),
        maxAgeMs: this.maxAgeMs,
      });
      this.deps.log.info(
        {
          streamId: stream.id,
          type: stream.type,
          events: batch.events.length,
          statusCode: outcome.statusCode,
          error: outcome.error,
          result,
        },
        'log stream attempt',
      );
    } catch (error) {
      this.deps.log.error({ err: error, streamId: stream.id }, 'log stream attempt failed');
    }
  }

  /** Waits for every batch in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.drain();
  }
}
