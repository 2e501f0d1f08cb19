/** A background worker the runtime starts and, on shutdown, stops before closing the database. */
export interface Worker {
  readonly name: string;
  /** Stops taking new work and resolves when the work in hand is done. */
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs` (first run after one interval), never two at once; `stop`
 * waits for a running tick. The shape the DNS and webhook workers can reuse.
 */
export function intervalWorker(
  name: string,
  intervalMs: number,
  tick: () => Promise<void>,
  onError: (error: unknown) => void,
): Worker {
  let running: Promise<void> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    name,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
