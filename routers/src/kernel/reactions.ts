/**
 * What other resources do when something happens to a resource they read. That resource cannot
 * import them back (no folder cycle), so they register here once, at composition (app-router.ts).
 * Reactions run in registration order, in the caller's transaction; none registered is an error,
 * as a skipped reaction (a revocation, a default role) would break a guarantee.
 */
export function reactions<A extends unknown[], R = unknown>(what: string) {
  const registered = new Set<(...args: A) => Promise<R>>();
  return {
    /** Registers a reaction; registering the same function again does nothing. */
    on(reaction: (...args: A) => Promise<R>): void {
      registered.add(reaction);
    },
    /** Runs every registered reaction, in registration order; their answers, in that order. */
    async run(...args: A): Promise<R[]> {
      if (registered.size === 0) throw new Error(`no reaction to ${what} is registered (app-router.ts)`);
      const answers: R[] = [];
      for (const reaction of registered) answers.push(await reaction(...args));
      return answers;
    },
  };
}
