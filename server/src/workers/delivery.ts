import type { Deps } from '@atrium/routers';
import { TickLoop } from './loop.ts';

/** What the webhook and log-stream workers share: address rule, timeout, leases, fairness, retries. */
export interface DeliveryWorkerOptions {
  /** Deliver to private, loopback and link-local addresses (`WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivate?: boolean;
  /** Per-attempt timeout (the whole request). */
  timeoutMs?: number;
  /**
   * How long past the timeout a taken item stays leased (default 60 s): a worker that dies
   * mid-attempt holds it that long, then another worker takes it.
   */
  leaseGraceMs?: number;
  /** Attempts in flight at once. */
  concurrency?: number;
  /** Attempts in flight at once per environment (half the concurrency), so one tenant cannot take every slot. */
  perEnvironment?: number;
  intervalMs?: number;
  /** First retry delay; doubles per attempt up to `retryMaxMs`, with jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The budget: what is still undelivered this long after it was recorded is given up. */
  maxAgeMs?: number;
  now?: () => Date;
  random?: () => number;
  /** Only these environments' work (tests; a deployment leaves it unset). */
  environmentId?: string | string[];
}

/**
 * The shape of an outbound delivery worker: `tick()` takes due work (leased, round-robin by
 * environment) and starts each attempt in the background; this class holds the options, the
 * attempts in flight, the retry schedule and the loop's lifecycle.
 */
export abstract class DeliveryWorker {
  protected readonly now: () => Date;
  protected readonly random: () => number;
  protected readonly allowPrivate: boolean;
  protected readonly timeoutMs: number;
  protected readonly leaseGraceMs: number;
  protected readonly concurrency: number;
  protected readonly perEnvironment: number;
  protected readonly retryBaseMs: number;
  protected readonly retryMaxMs: number;
  protected readonly maxAgeMs: number;
  protected readonly environments: string[] | undefined;
  /** How long the loop waits between ticks that found nothing (the poll interval). */
  protected readonly intervalMs: number;
  protected readonly inFlight = new Map<string, Promise<void>>();
  private readonly loop: TickLoop;

  constructor(
    protected readonly deps: Deps,
    options: DeliveryWorkerOptions,
    defaultConcurrency: number,
    name: string,
  ) {
    this.now = options.now ?? deps.now;
    this.random = options.random ?? Math.random;
    this.allowPrivate = options.allowPrivate ?? false;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseGraceMs = options.leaseGraceMs ?? 60_000;
    this.concurrency = options.concurrency ?? defaultConcurrency;
    this.perEnvironment = Math.max(1, options.perEnvironment ?? Math.floor(this.concurrency / 2));
    this.retryBaseMs = options.retryBaseMs ?? 30_000;
    this.retryMaxMs = options.retryMaxMs ?? 6 * 60 * 60 * 1000;
    this.maxAgeMs = options.maxAgeMs ?? 3 * 24 * 60 * 60 * 1000;
    this.environments =
      options.environmentId === undefined ? undefined : ([] as string[]).concat(options.environmentId);
    this.intervalMs = options.intervalMs ?? 1_000;
    this.loop = new TickLoop(
      async () => this.again(await this.tick()),
      this.intervalMs,
      (error) => deps.log.error({ err: error }, `${name} tick failed`),
    );
  }

  /** Takes due work and starts its attempts; returns how many were started. `drain()` waits for them. */
  abstract tick(): Promise<number>;

  /** Whether to tick again at once: something was started and a slot is still free. */
  protected again(started: number): boolean {
    return started > 0 && this.inFlight.size < this.concurrency;
  }

  /** The delay before the next attempt after `attempts` failures: doubling, capped, jittered. */
  retryDelayMs(attempts: number): number {
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** Runs `attempt` in the background under `id`; `settled` runs once it ends, either way. */
  protected track(id: string, attempt: Promise<void>, settled?: () => void): void {
    this.inFlight.set(
      id,
      attempt.finally(() => {
        this.inFlight.delete(id);
        settled?.();
      }),
    );
  }

  /** Waits for every attempt in flight. */
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
