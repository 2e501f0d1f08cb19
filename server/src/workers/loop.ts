/**
 * A timer loop around a worker's `tick()`: runs it every `intervalMs` (at once again when a
 * tick found a full batch), never two ticks at a time, and stops cleanly. Tests call `tick()`
 * directly instead.
 */
export class TickLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly tick: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts the loop: the first tick after `delayMs` (at once by default). */
  start(delayMs = 0): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(delayMs);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().then(
        (more) => this.schedule(more ? 0 : this.intervalMs),
        (error: unknown) => {
          this.onError(error);
          this.schedule(this.intervalMs);
        },
      );
    }, delay);
    this.timer.unref();
  }

  /** Stops the timer and waits for a tick in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(lanes);
}
