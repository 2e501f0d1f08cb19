import type { Deps } from '../kernel/deps.ts';
import { inBatches } from '../lib/batches.ts';
import { EXPIRING_TABLES, type ExpiringTable, purgeExpiredBefore } from './store.ts';

/**
 * How long a short-lived row is kept past its expiry before the sweep deletes it. Longer than
 * any window that counts such rows (codes and wrong passwords are counted over 10 minutes), so
 * a purge never resets a limit; a portal link purged after it reads "not valid", not "expired".
 */
export const EXPIRED_RECORD_GRACE_MS = 24 * 60 * 60_000;

/**
 * Deletes the rows of every short-lived table (retention/store.ts) that expired more than
 * `EXPIRED_RECORD_GRACE_MS` before `deps.now()`, in batches; how many went, per table.
 */
export async function purgeExpiredRecords(deps: Deps, batchSize = 5_000): Promise<Record<ExpiringTable, number>> {
  const cutoff = new Date(deps.now().getTime() - EXPIRED_RECORD_GRACE_MS);
  const purged = {} as Record<ExpiringTable, number>;
  for (const name of EXPIRING_TABLES) {
    purged[name] = await inBatches(batchSize, (size) => purgeExpiredBefore(deps.db, name, cutoff, size));
  }
  return purged;
}
