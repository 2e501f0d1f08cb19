/**
 * A deadline as one coarse timer for every call in flight, instead of a `setTimeout` per call (a
 * timer object and a closure per request, and, when calls come one at a time, libuv's timer
 * re-armed twice per request: bench/README.md, h2-pipeline): the request deadline, and the body
 * step's (body.ts). Every call has the same deadline, so calls in start order are in deadline
 * order: one interval of `tickMs` cuts those past it from the front of the list, and stops when
 * none is left. A call is cut between `deadlineMs` and `deadlineMs + tickMs` after it started.
 *
 * The calls running are a list threaded through the calls themselves, not a `Map`. Measured on
 * Node 20 (bench/README.md, "The sixteenth session"): with each call set in a long-lived `Map` and
 * deleted, 6-13 % of the bytes a request allocated were promoted to the old generation, and the
 * mark-compacts that followed cost 12-21 % of the CPU per request; with the list, under 1.5 %.
 */
export interface Deadlined {
  /** When its deadline passes (`performance.now()`), written by `start`. */
  due: number;
  /** While it runs: what `late` gets, and its neighbours in start order. */
  deadline?: { value: unknown; earlier: Deadlined | undefined; later: Deadlined | undefined } | undefined;
}

export class Deadlines<K extends Deadlined, V> {
  /** The first and last call running, in start order (so in deadline order). */
  private first: K | undefined;
  private last: K | undefined;
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
    key.deadline = { value, earlier: this.last, later: undefined };
    if (this.last?.deadline) this.last.deadline.later = key;
    else this.first = key;
    this.last = key;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      this.timer.unref();
    }
  }

  /** A call ends: false when it was cut already, or never started (its outcome is then dropped). */
  end(key: K): boolean {
    const place = key.deadline;
    if (!place) return false;
    key.deadline = undefined;
    const { earlier, later } = place;
    if (earlier?.deadline) earlier.deadline.later = later;
    else this.first = later as K | undefined;
    if (later?.deadline) later.deadline.earlier = earlier;
    else this.last = earlier as K | undefined;
    return true;
  }

  private sweep(): void {
    const now = performance.now();
    for (let key = this.first; key !== undefined; key = this.first) {
      if (key.due > now) return;
      const value = key.deadline?.value as V;
      this.end(key);
      this.late(key, value);
    }
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
