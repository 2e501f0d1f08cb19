import { loadConfig } from '@atrium/server';
import { describe, expect, it } from 'vitest';

describe('read replica settings', () => {
  it('are off without DATABASE_REPLICA_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://primary/db' }).replica).toBeUndefined();
  });

  it('take the lag bound and the check interval, with their defaults', () => {
    expect(
      loadConfig({ DATABASE_URL: 'postgres://primary/db', DATABASE_REPLICA_URL: 'postgres://replica/db' }).replica,
    ).toEqual({ url: 'postgres://replica/db', maxLagMs: 5_000, checkEveryMs: 250, readTimeoutMs: 2_000 });
    expect(
      loadConfig({
        DATABASE_URL: 'postgres://primary/db',
        DATABASE_REPLICA_URL: 'postgres://replica/db',
        DATABASE_REPLICA_MAX_LAG_MS: '1000',
        DATABASE_REPLICA_CHECK_MS: '100',
        DATABASE_REPLICA_READ_TIMEOUT_MS: '500',
      }).replica,
    ).toEqual({ url: 'postgres://replica/db', maxLagMs: 1_000, checkEveryMs: 100, readTimeoutMs: 500 });
  });

  it('refuse a replica without a PostgreSQL primary, and a bound that is not a number', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgres://replica/db' })).toThrow(/needs DATABASE_URL/);
    expect(() =>
      loadConfig({
        DATABASE_URL: 'postgres://primary/db',
        DATABASE_REPLICA_URL: 'postgres://replica/db',
        DATABASE_REPLICA_MAX_LAG_MS: 'soon',
      }),
    ).toThrow(/DATABASE_REPLICA_MAX_LAG_MS="soon": expected a whole number/);
  });
});
