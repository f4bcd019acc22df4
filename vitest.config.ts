import { defineConfig } from 'vitest/config';

/**
 * Tests that run fleets of child processes against one account (a real redis-server, the emulator on
 * an accelerated clock): they measure fairness and timing across processes, so they run after every
 * other test file, one at a time, with the machine's cores to themselves (`npm test` runs this project
 * in a vitest run of its own, after the other).
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
          // Two files at a time on a machine of two cores: most wait on child processes, sockets and timers.
          maxWorkers: 2,
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
