import { defineConfig } from 'vitest/config';

/**
 * Tests that run fleets of child processes against one account (a real redis-server, the emulator on
 * an accelerated clock): they measure fairness and timing across processes, so they run after every
 * other test file, one at a time, with the machine's cores to themselves.
 */
const FLEETS = ['test/redis/fleet.integration.test.ts', 'test/bullmq/workers.integration.test.ts', 'test/soak/fault-soak.integration.test.ts', 'test/soak/fault-soak.outages.integration.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'flowstream',
          include: ['test/**/*.test.ts'],
          exclude: FLEETS,
          // One file at a time (vitest's default on 2 cores): with two, tests on accelerated clocks and
          // real-time deadlines lose their timing on a loaded machine.
          // The type tests (test/**/*.test-d.ts) are compiled by `npm run typecheck` (tsc over test/, first
          // in `npm test`), where any of their assertions fails the build: no second tsc pass here.
        },
      },
      {
        extends: true,
        test: {
          name: 'fleets',
          include: FLEETS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
