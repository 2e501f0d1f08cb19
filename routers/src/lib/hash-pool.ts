import { availableParallelism } from 'node:os';
import { rateLimited } from '../kernel/errors.ts';

/**
 * Password hashing and checking, a few at a time per process, shared fairly between
 * environments (the idea of db/src/fair.ts for the workers): scrypt runs on libuv's threadpool
 * and holds up to 128 MiB each, so an unbounded burst takes the threadpool from DNS and files,
 * and native memory past the heap cap. One environment holds at most `perEnvironment` of the
 * `slots`, so another's passwords always find one; a freed slot goes to the next environment
 * in turn, and a job that waits too long is refused (429) rather than run late. Per process on
 * purpose: it bounds this process's CPU and memory.
 */
export class FairPool {
  private running = 0;
  private readonly busy = new Map<string, number>();
  /** Waiting jobs per environment, in turn order (an environment served moves to the end). */
  private readonly queues = new Map<string, Array<() => void>>();

  constructor(
    readonly slots: number,
    readonly perEnvironment: number,
    /** Waiting jobs one environment may have; past it, 429 (its own load, not the server's). */
    readonly maxWaiting: number,
    /**
     * How long a job may wait for a slot before it is refused (429) and never run: within the
     * request's deadline, so the caller hears back and no work is done for a caller gone.
     */
    readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  /** Runs `job` when a slot is free for `environmentId`. */
  async run<T>(environmentId: string, job: () => Promise<T>): Promise<T> {
    if (!this.admit(environmentId)) {
      const queue = this.queues.get(environmentId) ?? [];
      if (queue.length >= this.maxWaiting) throw tooBusy();
      await new Promise<void>((resolve, reject) => {
        const timer = Number.isFinite(this.maxWaitMs)
          ? setTimeout(() => {
              const at = queue.indexOf(start);
              if (at >= 0) queue.splice(at, 1);
              if (queue.length === 0 && this.queues.get(environmentId) === queue) this.queues.delete(environmentId);
              reject(tooBusy());
            }, this.maxWaitMs)
          : undefined;
        const start = () => {
          clearTimeout(timer);
          resolve();
        };
        queue.push(start);
        this.queues.set(environmentId, queue);
      });
    }
    try {
      return await job();
    } finally {
      this.release(environmentId);
    }
  }

  /** Jobs running and waiting (tests, metrics). */
  get load(): { running: number; waiting: number } {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { running: this.running, waiting };
  }

  /** Takes a slot now when one is free for the environment and nobody of it waits already. */
  private admit(environmentId: string): boolean {
    if (this.queues.has(environmentId) || !this.hasRoom(environmentId)) return false;
    this.take(environmentId);
    return true;
  }

  private hasRoom(environmentId: string): boolean {
    return this.running < this.slots && (this.busy.get(environmentId) ?? 0) < this.perEnvironment;
  }

  private take(environmentId: string): void {
    this.running++;
    this.busy.set(environmentId, (this.busy.get(environmentId) ?? 0) + 1);
  }

  private release(environmentId: string): void {
    this.running--;
    const held = (this.busy.get(environmentId) ?? 1) - 1;
    if (held === 0) this.busy.delete(environmentId);
    else this.busy.set(environmentId, held);
    this.dispatch();
  }

  /** Hands free slots to waiting environments in turn, each served one moving to the end. */
  private dispatch(): void {
    for (const [environmentId, queue] of this.queues) {
      if (this.running >= this.slots) return;
      if (!this.hasRoom(environmentId)) continue;
      const next = queue.shift();
      this.queues.delete(environmentId);
      if (queue.length > 0) this.queues.set(environmentId, queue);
      if (next) {
        this.take(environmentId);
        next();
      }
    }
  }
}

const tooBusy = () => rateLimited('Too many password operations at once; retry in a moment.', 1);

/**
 * The process's password pool: a slot per core, at least two and at most four (libuv's default
 * threadpool has four threads), and one environment may hold all but one of them.
 */
const SLOTS = Math.max(2, Math.min(4, availableParallelism()));
export const passwordPool = new FairPool(SLOTS, SLOTS - 1, 64, 5_000);
