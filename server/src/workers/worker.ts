/** A background worker the runtime starts and, on shutdown, stops before closing the database. */
export interface Worker {
  readonly name: string;
  /** Stops taking new work and resolves when the work in hand is done. */
  stop(): Promise<void>;
}
