// A per-process cache emptied by invalidations: one mechanism for what a process keeps of the
// database between requests (API keys, SCIM tokens, client ids' environments, signing keys).
import type { Deps } from '../kernel/deps.ts';
import { type InvalidationTopic, onInvalidation } from './service.ts';

/** What a cache is, declared once per kind where its module starts. */
export interface ProcessCacheSpec<V> {
  /** Entries this process holds at most; past it the oldest is forgotten. */
  max: number;
  /**
   * Trust an entry past its TTL while this process hears the invalidation channel: every change
   * to what it holds is notified. False where some change is not (the TTL then bounds it always).
   */
  untilNotified: boolean;
  /** An entry's own end, besides its TTL (signing keys: the next key's activation or retirement). */
  alive?: (value: V, nowMs: number) => boolean;
  /** Which entries a notification of each topic names (`*`, after a reconnect, names all). */
  forget: Partial<Record<InvalidationTopic, (value: V, id: string) => boolean>>;
}

interface Entry<V> {
  value: V;
  staleAt: number;
}

/** One cache of one process (its `deps.caches`), as `processCache(spec)(deps)` returns it. */
export class ProcessCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #invalidation: Deps['caches']['invalidation'];
  readonly #spec: ProcessCacheSpec<V>;

  constructor(deps: Deps, spec: ProcessCacheSpec<V>) {
    this.#invalidation = deps.caches.invalidation;
    this.#spec = spec;
    const topics = Object.keys(spec.forget) as InvalidationTopic[];
    for (const topic of topics) {
      const names = spec.forget[topic] as (value: V, id: string) => boolean;
      onInvalidation(deps, topic, (id) => this.forgetWhere((value) => id === '*' || names(value, id)));
    }
  }

  /** The value cached for `key`, while it is to be trusted at `nowMs`. */
  get(key: string, nowMs: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const { alive, untilNotified } = this.#spec;
    if (alive && !alive(entry.value, nowMs)) return undefined;
    return (untilNotified && this.#invalidation.listening) || entry.staleAt > nowMs ? entry.value : undefined;
  }

  /**
   * The cached value, or `load`'s, kept `ttlMs` (the caller's setting: processes sharing a cache
   * may differ). A miss (undefined) is never cached, so bogus keys cannot fill the cache; a value
   * read while a notification arrived may predate the change it names, so it is answered, not kept.
   */
  async resolve(key: string, nowMs: number, ttlMs: number, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.get(key, nowMs);
    if (cached !== undefined) return cached;
    const invalidation = this.#invalidation;
    const epoch = invalidation.epoch;
    const value = await load();
    this.#entries.delete(key);
    if (value !== undefined && invalidation.epoch === epoch) this.#keep(key, value, nowMs + ttlMs);
    return value;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Every value held, trusted or not (for tests and metrics). */
  values(): V[] {
    return [...this.#entries.values()].map((e) => e.value);
  }

  forgetWhere(names: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (names(entry.value)) this.#entries.delete(key);
  }

  #keep(key: string, value: V, staleAt: number): void {
    if (this.#entries.size >= this.#spec.max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, staleAt });
  }
}

/**
 * Declares a kind of cache; the function it returns gives a process's own (one per `deps.caches`,
 * made on first use, its invalidation handlers registered then).
 */
export function processCache<V>(spec: ProcessCacheSpec<V>): (deps: Deps) => ProcessCache<V> {
  const byProcess = new WeakMap<Deps['caches'], ProcessCache<V>>();
  return (deps) => {
    let cache = byProcess.get(deps.caches);
    if (!cache) {
      cache = new ProcessCache(deps, spec);
      byProcess.set(deps.caches, cache);
    }
    return cache;
  };
}
