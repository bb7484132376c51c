import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Names and stops any process a test left running (see the file).
    globalSetup: ['test/support/leftover-processes.ts'],
    // Tests start real processes and servers; keep the 2-core machines from thrashing.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
