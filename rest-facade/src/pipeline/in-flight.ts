import type { ServerResponse } from 'node:http';
import { ApiError } from '@atrium/routers';

export interface InFlightOptions {
  /** Requests that may run at once in this process, pages weighed by `weightOfPage` (default 32). */
  max: number;
  /** Requests that may wait for a turn; one more is refused at once (default 1,024). */
  queue: number;
  /** The longest a request waits for its turn before it is refused, in ms (default 5,000). */
  timeoutMs: number;
}

export const DEFAULT_IN_FLIGHT: InFlightOptions = { max: 32, queue: 1_024, timeoutMs: 5_000 };

/** Items of a page that weigh as much as one request. */
const ITEMS_PER_REQUEST = 25;

/**
 * What a call weighs against `max`: a page of `limit` items (the contract's `limit`, at most
 * 100) counts ⌈limit / 25⌉ requests, anything else one. So the default 32 runs 32 reads of one
 * organization or first pages of 10 at once, but 8 pages of 100.
 */
export function weightOfPage(limit: unknown): number {
  const items = typeof limit === 'number' ? limit : typeof limit === 'string' ? Number(limit) : Number.NaN;
  if (!(items > ITEMS_PER_REQUEST)) return 1;
  return Math.ceil(Math.min(items, 100) / ITEMS_PER_REQUEST);
}

/** Why a request was refused a turn (the `reason` label of `atrium_http_shed_total`). */
export type ShedReason = 'queue_full' | 'timeout';

/** A turn: go on, or answer 503 with `Retry-After`. `closed` means the caller left while waiting. */
export type Turn = { ok: true } | { ok: false; reason: ShedReason | 'closed'; error: ApiError; retryAfter: number };

interface Waiter {
  res: ServerResponse;
  weight: number;
  deadline: number;
  resolve: (turn: Turn) => void;
  onClose: () => void;
  /** Answered already: admitted, shed, or its caller left. Left in the list, skipped when reached. */
  done: boolean;
  next: Waiter | undefined;
}

const GO: Turn = { ok: true };
const RETRY_AFTER_SECONDS = 1;

const overloaded = () => new ApiError(503, 'service_unavailable', 'The server is at capacity. Try again shortly.');

/** The caller closed the connection before its turn: nothing to run, nobody to answer. */
const left = (): Turn => ({ ok: false, reason: 'closed', error: overloaded(), retryAfter: RETRY_AFTER_SECONDS });

/**
 * Admission control for the API: requests run their procedures while their weights (one, or
 * more for a large page: `weightOfPage`) add up to at most `max`; the rest wait their turn in
 * arrival order, at most `queue` of them and `timeoutMs` each, and are then refused with 503
 * `service_unavailable` and `Retry-After`. A turn is held until the response closes (sent, or
 * its connection lost). Strictly first come, first served: a large page at the head of the
 * queue is not overtaken by small requests, so it cannot starve.
 *
 * What a request holds while it runs (rows, the objects built from them, the JSON) is what the
 * process's memory follows under load: bounding it by rows bounds the memory, where waiting
 * requests hold only their sockets. On the bench's pages of 100 organizations at 32 connections,
 * 8 running instead of 32 cut the peak RSS by ~9 MB and the CPU per page by a third (less to
 * promote in each scavenge); small requests, which need the concurrency to keep the CPU busy
 * while PostgreSQL answers, still run 32 at once (bench/README.md, seventh pass).
 */
export class InFlightLimit {
  private running = 0;
  private waiting = 0;
  private head: Waiter | undefined;
  private tail: Waiter | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly options: InFlightOptions = DEFAULT_IN_FLIGHT,
    private readonly onShed: (reason: ShedReason) => void = () => {},
  ) {}

  /** The weight running now (requests, large pages counted by `weightOfPage`), and requests waiting. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  /** Takes a turn for the request answered by `res`, now (no promise) or when one frees up. */
  enter(res: ServerResponse, weight = 1): Turn | Promise<Turn> {
    // Its caller left already (while its rate limit was counted): 'close' will not come again.
    if (res.closed) return left();
    // A call heavier than the whole limit runs alone.
    const w = Math.max(1, Math.min(weight, this.options.max));
    if (this.waiting === 0 && this.running + w <= this.options.max) {
      this.running += w;
      res.once('close', () => this.release(w));
      return GO;
    }
    if (this.waiting >= this.options.queue) return this.refuse('queue_full');
    return new Promise<Turn>((resolve) => {
      const waiter: Waiter = {
        res,
        weight: w,
        deadline: performance.now() + this.options.timeoutMs,
        resolve,
        onClose: () => {
          if (waiter.done) return;
          waiter.done = true;
          this.waiting--;
          resolve(left());
          // Whoever waited behind it may fit now.
          this.drain();
        },
        done: false,
        next: undefined,
      };
      res.once('close', waiter.onClose);
      if (this.tail) this.tail.next = waiter;
      else this.head = waiter;
      this.tail = waiter;
      this.waiting++;
      this.armTimer();
    });
  }

  /** A running request's response closed: its weight frees turns for the waiters at the head. */
  private release(weight: number): void {
    this.running -= weight;
    this.drain();
  }

  /**
   * Walks the queue from its head: drops waiters whose callers left, refuses those past their
   * deadline, and admits the rest while they fit. Waiters share one timeout and join in order,
   * so deadlines only grow along the queue.
   */
  private drain(): void {
    const now = performance.now();
    for (let waiter = this.head; waiter; waiter = this.head) {
      if (!waiter.done) {
        if (waiter.deadline > now && this.running + waiter.weight > this.options.max) break;
        waiter.done = true;
        this.waiting--;
        waiter.res.off('close', waiter.onClose);
        if (waiter.deadline <= now) waiter.resolve(this.refuse('timeout'));
        else {
          const w = waiter.weight;
          this.running += w;
          waiter.res.once('close', () => this.release(w));
          waiter.resolve(GO);
        }
      }
      this.head = waiter.next;
      if (!this.head) this.tail = undefined;
    }
    this.armTimer();
  }

  /** One timer for the whole queue, at its head's deadline (the earliest). */
  private armTimer(): void {
    if (this.timer || this.waiting === 0 || !this.head) return;
    const delay = Math.max(0, this.head.deadline - performance.now());
    this.timer = setTimeout(this.expire, delay);
    this.timer.unref();
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    this.drain();
  };

  private refuse(reason: ShedReason): Turn {
    this.onShed(reason);
    return { ok: false, reason, error: overloaded(), retryAfter: RETRY_AFTER_SECONDS };
  }
}
