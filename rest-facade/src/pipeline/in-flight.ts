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

/**
 * A turn taken: the call runs, and `release` gives the turn back when the call ends (or is cut at
 * its deadline). Only the first `release` counts, so a turn is never given back twice.
 */
export interface Admitted {
  ok: true;
  release: () => void;
}

/** A turn: go on, or answer 503 with `Retry-After`. `closed` means the caller left while waiting. */
export type Turn = Admitted | { ok: false; reason: ShedReason | 'closed'; error: ApiError; retryAfter: number };

interface Waiter {
  res: ServerResponse;
  weight: number;
  deadline: number;
  /** Arrival order over every share: the tie-break between shares using as much. */
  seq: number;
  share: Share;
  resolve: (turn: Turn) => void;
  onClose: () => void;
  /** Answered already: admitted, shed, or its caller left. Left in the list, skipped when reached. */
  done: boolean;
  next: Waiter | undefined;
}

/** One environment's (or caller's, `Limits.turn`) part of the limit: its weight running, its own queue. */
interface Share {
  key: string;
  running: number;
  head: Waiter | undefined;
  tail: Waiter | undefined;
}

const RETRY_AFTER_SECONDS = 1;

const overloaded = () => new ApiError(503, 'service_unavailable', 'The server is at capacity. Try again shortly.');

/** The caller closed the connection before its turn: nothing to run, nobody to answer. */
const left = (): Turn => ({ ok: false, reason: 'closed', error: overloaded(), retryAfter: RETRY_AFTER_SECONDS });

/**
 * Admission control for the API: requests run their procedures while their weights (one, or
 * more for a large page: `weightOfPage`) add up to at most `max`; the rest wait their turn, at
 * most `queue` of them and `timeoutMs` each, and are then refused with 503
 * `service_unavailable` and `Retry-After`. A turn is held until its call ends (answered, failed, or
 * cut at the request deadline: pipeline.ts), not until its response closes: a caller that sends
 * and disconnects leaves its call running, and that call keeps its turn, so the limit bounds the
 * work running, not the answers awaited.
 *
 * Turns are shared fairly between environments (the `share` of `enter`), as the workers share
 * their rounds (db/src/fair.ts): when a turn frees up, it goes to the waiting request of the
 * share that has the least weight running, the earliest arrival among equals; within a share,
 * strictly first come, first served. So one environment's slow calls (password hashing, large
 * pages) take the turns others leave free, but every other environment's next request goes
 * before them. The chosen request is not overtaken while it waits for room: a large page
 * cannot starve. With one share this is the plain arrival order.
 *
 * What a request holds while it runs (rows, the objects built from them, the JSON) is what the
 * process's memory follows under load: bounding it by rows bounds the memory, where waiting
 * requests hold their sockets and bodies (at most 1 MiB each, read before they queue). On the
 * bench's pages of 100 organizations at 32 connections, 8 running instead of 32 cut the peak
 * RSS by ~9 MB and the CPU per page by a third (less to promote in each scavenge); small
 * requests, which need the concurrency to keep the CPU busy while PostgreSQL answers, still
 * run 32 at once (bench/README.md, seventh pass).
 */
export class InFlightLimit {
  private running = 0;
  private waiting = 0;
  private seq = 0;
  /** Every share running or waiting; a share is dropped when it has neither. */
  private readonly shares = new Map<string, Share>();
  /** The shares with waiters (some of them perhaps answered already). */
  private readonly queued = new Set<Share>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly options: InFlightOptions = DEFAULT_IN_FLIGHT,
    private readonly onShed: (reason: ShedReason) => void = () => {},
  ) {}

  /** The weight running now (requests, large pages counted by `weightOfPage`), and requests waiting. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  /** The weight running of one share (tests and metrics). */
  runningOf(share: string): number {
    return this.shares.get(share)?.running ?? 0;
  }

  /**
   * Takes a turn for the request answered by `res`, in `share` (its environment), now (no
   * promise) or when one frees up; the caller gives it back with `release`. `res` only tells
   * when a waiting caller leaves (it is then dropped from the queue).
   */
  enter(res: ServerResponse, weight = 1, share = ''): Turn | Promise<Turn> {
    // Its caller left already (while its rate limit was counted): 'close' will not come again.
    if (res.closed) return left();
    // A call heavier than the whole limit runs alone.
    const w = Math.max(1, Math.min(weight, this.options.max));
    if (this.waiting === 0 && this.running + w <= this.options.max) {
      return this.admit(this.shareOf(share), w);
    }
    if (this.waiting >= this.options.queue) return this.refuse('queue_full');
    return new Promise<Turn>((resolve) => {
      const waiter: Waiter = {
        res,
        weight: w,
        deadline: performance.now() + this.options.timeoutMs,
        seq: this.seq++,
        share: this.shareOf(share),
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
      const queue = waiter.share;
      if (queue.tail) queue.tail.next = waiter;
      else queue.head = waiter;
      queue.tail = waiter;
      this.queued.add(queue);
      this.waiting++;
      // A share using less than the one whose head waits for room goes first, if it fits now.
      if (this.running < this.options.max) this.drain();
      else this.armTimer();
    });
  }

  private shareOf(key: string): Share {
    let share = this.shares.get(key);
    if (!share) {
      share = { key, running: 0, head: undefined, tail: undefined };
      this.shares.set(key, share);
    }
    return share;
  }

  private admit(share: Share, weight: number): Admitted {
    this.running += weight;
    share.running += weight;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.release(share, weight);
    };
    return { ok: true, release };
  }

  /** A running call ended (or was cut at its deadline): its weight frees turns for the waiters. */
  private release(share: Share, weight: number): void {
    this.running -= weight;
    share.running -= weight;
    this.forget(share);
    if (this.waiting > 0) this.drain();
  }

  /** Drops a share that has nothing running and nobody waiting (the map holds only live ones). */
  private forget(share: Share): void {
    if (share.running === 0 && share.head === undefined && this.shares.get(share.key) === share)
      this.shares.delete(share.key);
  }

  /**
   * The first waiter of a share still to be answered, dropping those answered already and
   * refusing those past their deadline (a share's deadlines grow along its queue).
   */
  private headOf(share: Share, now: number): Waiter | undefined {
    for (let waiter = share.head; waiter; waiter = share.head) {
      if (!waiter.done) {
        if (waiter.deadline > now) return waiter;
        this.take(waiter);
        waiter.resolve(this.refuse('timeout'));
        continue;
      }
      share.head = waiter.next;
    }
    share.tail = undefined;
    this.queued.delete(share);
    this.forget(share);
    return undefined;
  }

  /** Takes a waiter off the head of its share's queue, answered. */
  private take(waiter: Waiter): void {
    waiter.done = true;
    this.waiting--;
    waiter.res.off('close', waiter.onClose);
    const share = waiter.share;
    share.head = waiter.next;
    if (!share.head) {
      share.tail = undefined;
      this.queued.delete(share);
    }
  }

  /**
   * Refuses the waiters past their deadline, then admits, while it fits, the head of the share
   * with the least weight running (the earliest among equals); the one chosen waits for room
   * rather than be overtaken.
   */
  private drain(): void {
    const now = performance.now();
    for (;;) {
      let chosen: Waiter | undefined;
      for (const share of this.queued) {
        const head = this.headOf(share, now);
        if (!head) continue;
        const best = chosen?.share;
        if (
          !chosen ||
          !best ||
          share.running < best.running ||
          (share.running === best.running && head.seq < chosen.seq)
        )
          chosen = head;
      }
      if (!chosen || this.running + chosen.weight > this.options.max) break;
      this.take(chosen);
      chosen.resolve(this.admit(chosen.share, chosen.weight));
    }
    this.armTimer();
  }

  /** One timer for the whole queue, at the earliest deadline of the shares' heads. */
  private armTimer(): void {
    if (this.timer || this.waiting === 0) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const share of this.queued) {
      for (let waiter = share.head; waiter; waiter = waiter.next) {
        if (waiter.done) continue;
        if (waiter.deadline < earliest) earliest = waiter.deadline;
        break;
      }
    }
    if (earliest === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(this.expire, Math.max(0, earliest - performance.now()));
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
