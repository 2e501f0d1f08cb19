import {
  type AuditLogStreamRow,
  type Deps,
  prepareBatch,
  type StreamAttemptResult,
  settleBatch,
  takeDueStreams,
} from '@atrium/routers';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery.ts';
import { sendGuarded } from './guarded-http.ts';

export interface LogStreamWorkerOptions extends DeliveryWorkerOptions {
  /** Events per batch (one request, one object). */
  batchSize?: number;
  /** How long a stream with nothing to deliver waits before it is looked at again. */
  idleMs?: number;
  /** Extra trusted certificate authorities (PEM), for a test's self-signed receiver. */
  ca?: string;
}

/**
 * The log-stream worker (issue #38): each tick takes due active streams round-robin by
 * environment (leased, SKIP LOCKED, so one stream has one batch in flight across all workers), and
 * for each sends the next batch of its organization's audit log events after its cursor, in commit
 * order, to its destination through the guarded HTTP client of the webhooks; the cursor moves
 * only when the destination accepted the batch. Retries, budget and the address rule are the
 * webhooks'.
 */
export class LogStreamWorker extends DeliveryWorker {
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly ca: string | undefined;
  private cursor = '';

  constructor(deps: Deps, options: LogStreamWorkerOptions = {}) {
    super(deps, options, 8, 'log stream');
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.idleMs = options.idleMs ?? 5_000;
    this.ca = options.ca;
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
    for (const stream of taken.streams) this.track(stream.id, this.attempt(stream));
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
}
