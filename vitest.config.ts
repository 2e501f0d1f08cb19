import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql 16 ships CJS (main) and ESM (module): Node loads the CJS one for graphql-yoga and Pothos,
  // so the workspaces' own `import 'graphql'` must too, else its instanceof checks fail across the two.
  resolve: { alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }] },
  test: {
    include: ['tests/src/**/*.test.ts'],
    globalSetup: ['tests/src/global-setup.ts'],
    // Checks every REST response the tests receive against upstream's OpenAPI document.
    setupFiles: ['tests/src/upstream-guard.setup.ts'],
    // One migrated database per worker: files of a worker share modules (and so the database);
    // every test isolates itself by making its own environment.
    pool: 'forks',
    poolOptions: { forks: { isolate: false } },
    testTimeout: 30_000,
    // expect.poll waits for what comes true in its own time (a widget's render after a server
    // round trip, a worker's pass): 10 s as the browser tests' actions, not vitest's 1 s, which
    // CI's two storages side by side on two cores can overrun.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 120_000,
  },
});
