import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/src/**/*.test.ts'],
    globalSetup: ['tests/src/global-setup.ts'],
    // One migrated database per worker: files of a worker share modules (and so the database);
    // every test isolates itself by making its own environment.
    pool: 'forks',
    poolOptions: { forks: { isolate: false } },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
