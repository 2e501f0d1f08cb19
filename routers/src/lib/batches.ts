/**
 * Work in batches: `batch(batchSize)` handles at most that many rows, one statement or
 * transaction each, so that none holds many locks; batches run until one handles fewer than
 * `batchSize`. How many were handled in all. Every retention purge (and the SSO time-outs) runs
 * through here.
 */
export async function inBatches(batchSize: number, batch: (batchSize: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await batch(batchSize);
    total += handled;
    if (handled < batchSize) return total;
  }
}
