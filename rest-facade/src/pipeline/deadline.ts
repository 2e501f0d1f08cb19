/**
 * A deadline as one coarse timer for every call in flight, instead of a `setTimeout` per call (a
 * timer object and a closure per request, and, when calls come one at a time, libuv's timer
 * re-armed twice per request: bench/README.md, h2-pipeline): the request deadline, and the body
 * step's (body.ts). Every call has the same deadline, so calls in start order are in deadline
 * order: one interval of `tickMs` cuts those past it from the front of a Map, and stops when none
 * is left. A call is cut between `deadlineMs` and `deadlineMs + tickMs` after it started.
 */
export class Deadlines<K extends { due: number }, V> {
  /** Each call in flight (its `due`: when its deadline passes, `performance.now()`), in start order. */
  private readonly running = new Map<K, V>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The slack: a tenth of the deadline, at most 250 ms. */
  readonly tickMs: number;

  /** `late` answers a call past its deadline. */
  constructor(
    readonly deadlineMs: number,
    private readonly late: (key: K, value: V) => void,
  ) {
    this.tickMs = Math.min(250, Math.max(1, Math.ceil(deadlineMs / 10)));
  }

  /** A call starts: it is cut if it is still running past the deadline. */
  start(key: K, value: V): void {
    key.due = performance.now() + this.deadlineMs;
    this.running.set(key, value);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      this.timer.unref();
    }
  }

  /** A call ends: false when it was cut already (its outcome is then dropped). */
  end(key: K): boolean {
    return this.running.delete(key);
  }

  private sweep(): void {
    const now = performance.now();
    for (const [key, value] of this.running) {
      if (key.due > now) return;
      this.running.delete(key);
      this.late(key, value);
    }
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
